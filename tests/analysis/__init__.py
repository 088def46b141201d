"""Tests of the analysis: tables, figures and the summary from record files."""
