package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/kilroy-bot/kilroy-bot/checks"
)

// writeReport replaces a run directory's report.md with the local report
// of v (the summary check's Markdown and every verify check), atomically,
// so that the run page never reads half a file. A run directory that does
// not exist is left alone: the run has not started, or was cleared.
func writeReport(runDir string, v *checks.RunView, opts checks.RenderOptions) error {
	if _, err := os.Stat(runDir); err != nil {
		return nil
	}
	path := filepath.Join(runDir, "report.md")
	tmp, err := os.CreateTemp(runDir, ".report.md.*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.WriteString(checks.LocalReport(v, opts)); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
