// Placeholder: tests for this unit are being written.
