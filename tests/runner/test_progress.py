"""runner.progress: a plain line per interval where a redrawn bar would leave carriage
returns (a log file), a tqdm bar on a terminal."""
import io

from runner.progress import LogProgress, progress


class Tty(io.StringIO):
    def isatty(self):
        return True


def test_a_log_gets_plain_lines_and_a_last_one_at_close():
    buf = io.StringIO()
    bar = progress(total=3, desc="runs", stream=buf, log_every_s=0.0)
    assert isinstance(bar, LogProgress)
    for _ in range(3):
        bar.update(1)
    bar.close()
    bar.close()  # a second close adds nothing
    lines = buf.getvalue().splitlines()
    assert "\r" not in buf.getvalue()
    assert [ln.split(" runs,")[0] for ln in lines] == ["runs: 1/3", "runs: 2/3", "runs: 3/3",
                                                       "runs: 3/3"]
    assert all(ln.endswith(" s") for ln in lines)


def test_a_log_line_at_most_every_interval():
    buf = io.StringIO()
    bar = progress(total=100, desc="verify", stream=buf, log_every_s=3600.0)
    for _ in range(100):
        bar.update(1)
    assert buf.getvalue() == ""
    bar.close()
    assert buf.getvalue().startswith("verify: 100/100 runs, ")


def test_disabled_shows_nothing_and_a_terminal_gets_tqdm():
    buf = io.StringIO()
    bar = progress(total=0, desc="runs", stream=buf, disable=True)
    bar.update(1)
    bar.close()
    assert buf.getvalue() == ""
    tty = Tty()
    bar = progress(total=2, desc="runs", stream=tty)
    assert type(bar).__name__ == "tqdm"
    bar.close()
