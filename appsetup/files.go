package appsetup

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"github.com/kilroy-bot/kilroy-bot/ghapp"
)

// Files are where an App's credentials are stored, one secret a file,
// each readable by its owner only (0600) in a directory only its owner
// may enter (0700).
type Files struct {
	Dir string
}

// FilesIn are the credential files under a data dir: DATA/github-app/.
func FilesIn(dataDir string) Files { return Files{Dir: filepath.Join(dataDir, "github-app")} }

// AppID, PrivateKey and WebhookSecret are the three files' paths.
func (f Files) AppID() string         { return filepath.Join(f.Dir, "app-id") }
func (f Files) PrivateKey() string    { return filepath.Join(f.Dir, "private-key.pem") }
func (f Files) WebhookSecret() string { return filepath.Join(f.Dir, "webhook-secret") }

func (f Files) paths() []string { return []string{f.AppID(), f.PrivateKey(), f.WebhookSecret()} }

// checkFree refuses to go on when any of the files exists: its App's key
// would be lost.
func (f Files) checkFree() error {
	for _, p := range f.paths() {
		_, err := os.Lstat(p)
		switch {
		case err == nil:
			return fmt.Errorf("%s exists: an App is set up already; remove %s to register a new one (or use another --data-dir)", p, f.Dir)
		case !errors.Is(err, fs.ErrNotExist):
			return fmt.Errorf("check %s: %w", p, err)
		}
	}
	return nil
}

// Store writes the credentials. Each file is written under a temporary
// name and linked into place, so a file that exists is whole and an
// existing file is never replaced.
func (f Files) Store(c ghapp.AppCredentials) error {
	if err := os.MkdirAll(f.Dir, 0o700); err != nil {
		return fmt.Errorf("store App credentials: %w", err)
	}
	if err := os.Chmod(f.Dir, 0o700); err != nil {
		return fmt.Errorf("store App credentials: %w", err)
	}
	if err := f.checkFree(); err != nil {
		return err
	}
	for _, w := range []struct {
		path string
		data []byte
	}{
		{f.AppID(), []byte(strconv.FormatInt(c.ID, 10) + "\n")},
		{f.PrivateKey(), c.PrivateKeyPEM},
		{f.WebhookSecret(), c.WebhookSecret},
	} {
		if err := writePrivate(w.path, w.data); err != nil {
			return err
		}
	}
	return nil
}

// writePrivate writes data to path with mode 0600, whole or not at all.
func writePrivate(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name()) // the link at path stays
	_, werr := tmp.Write(data)
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr, os.Chmod(tmp.Name(), 0o600)); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	// Link fails when path exists, unlike rename, which would replace it.
	if err := os.Link(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
