"""The names of what a recorder writes into an episode directory (the rest of the directory is its user's)."""

TRAJECTORY_FILE = "trajectory.jsonl"
WARC_FILE = "evidence.warc.gz"
SCREENS_DIR = "screens"
