"""transcript-doctor: lint and repair stored AI-agent session transcripts."""

__version__ = "0.1.0"
