"""Tests of the repository as a whole: the README's commands and numbers, the committed results, self-containment."""
