package attractor

import (
	"fmt"
	"os"
	"path/filepath"
)

// historyDir keeps earlier attempts of a stage: each attempt's files move
// to history/NNN/ before the next attempt starts, so the stage directory
// always shows the latest attempt and nothing is lost.
const historyDir = "history"

// prepareStageDir creates dir, archiving what a previous attempt left.
func prepareStageDir(dir string) error {
	entries, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return os.MkdirAll(dir, 0o755)
	}
	if err != nil {
		return err
	}
	var old []string
	for _, e := range entries {
		if e.Name() != historyDir {
			old = append(old, e.Name())
		}
	}
	if len(old) == 0 {
		return nil
	}
	dest, err := nextHistoryDir(dir)
	if err != nil {
		return err
	}
	for _, name := range old {
		if err := os.Rename(filepath.Join(dir, name), filepath.Join(dest, name)); err != nil {
			return fmt.Errorf("archive previous attempt: %w", err)
		}
	}
	return nil
}

func nextHistoryDir(dir string) (string, error) {
	h := filepath.Join(dir, historyDir)
	entries, err := os.ReadDir(h)
	if err != nil && !os.IsNotExist(err) {
		return "", err
	}
	dest := filepath.Join(h, fmt.Sprintf("%03d", len(entries)+1))
	if err := os.MkdirAll(dest, 0o755); err != nil {
		return "", err
	}
	return dest, nil
}
