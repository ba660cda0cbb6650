package safefile

import (
	"fmt"
	"os"
	"path/filepath"
)

// WriteFile replaces the file at path with data: it writes a new file
// beside it and renames that over path, so whatever a node left at path (a
// symlink to a file of the host, a FIFO) is replaced, never written
// through or blocked on. Errors name the file by its base name.
func WriteFile(path string, data []byte) error {
	name := filepath.Base(path)
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+name+".*")
	if err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	defer os.Remove(tmp.Name()) // gone after the rename; the leftover of a failure
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", name, err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", name, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("replace %s: %w", name, err)
	}
	return nil
}
