package main

import (
	"os"
	"path/filepath"

	"github.com/kilroy-bot/kilroy-bot/attractor/safefile"
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
	return safefile.WriteFile(filepath.Join(runDir, "report.md"), []byte(checks.LocalReport(v, opts)))
}
