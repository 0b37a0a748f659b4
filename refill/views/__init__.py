"""What people read: status and gaps text, the board, reports."""
