"""An empty stand-in for farama_notifications (imported by Gymnasium for
optional notices; not packaged by Debian)."""
