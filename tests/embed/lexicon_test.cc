// Placeholder: replaced by the work that owns this file.
