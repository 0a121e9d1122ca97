"""What turns checks into a run's result: the lint run (`lint`), the suppressions and the
baseline it applies to findings, and the support matrix built from a run's findings."""
