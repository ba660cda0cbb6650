package ghserver

import (
	"path/filepath"

	"github.com/kilroy-bot/kilroy-bot/checks"
	"github.com/kilroy-bot/kilroy-bot/server"
)

// NewRedactor is the redactor of what a server posts to GitHub: it hides
// secrets (the server's own and the host's, sandbox.HostSecrets) and shows
// server.DataDirShown for the data dir dataDir, however a message spells
// it (DESIGN §5: no host path of the data dir in anything posted).
func NewRedactor(dataDir string, secrets ...string) *checks.Redactor {
	return checks.NewRedactor(secrets...).WithPaths(server.DataDirShown, dataDirPaths(dataDir)...)
}

// dataDirPaths are the ways a message may spell the data dir: absolute,
// and with links resolved.
func dataDirPaths(dir string) []string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil
	}
	out := []string{abs}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		out = append(out, real)
	}
	return out
}
