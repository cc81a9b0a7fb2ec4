"""Report writers: JSON for machines, Markdown for CI logs, PNG plots for people."""
