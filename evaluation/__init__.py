"""The shared judge-and-score stage. Depends only on ``scanrag`` schemas and the gateway."""
