package main

import (
	"fmt"
	"io/fs"
	"log/slog"
	"os"
)

// closeDataDir makes the data dir readable by its owner only (0700),
// saying so when it changes the mode. Worktrees and caches are under it,
// and a node may leave anything there: with the bot running as root, a
// file a node made setuid (bubblewrap's mounts are nosuid inside the jail,
// the host's are not) is a setuid-root program on the host for any user
// who can reach it. The data dir also holds the App's key and every
// tenant's code.
func closeDataDir(dir string, logger *slog.Logger) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create data dir: %w", err)
	}
	st, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("data dir: %w", err)
	}
	if st.Mode().Perm()&0o077 == 0 {
		return nil
	}
	if err := os.Chmod(dir, st.Mode().Perm()&^fs.FileMode(0o077)); err != nil {
		return fmt.Errorf("data dir %s is open to other users (mode %#o) and cannot be closed: %w; run chmod 700 on it", dir, st.Mode().Perm(), err)
	}
	if logger != nil {
		logger.Info("data dir closed to other users: worktrees and caches hold what nodes write", "dir", dir,
			"mode_was", fmt.Sprintf("%#o", st.Mode().Perm()), "mode", fmt.Sprintf("%#o", st.Mode().Perm()&^0o077))
	}
	return nil
}
