package agent

import (
	"bytes"
	"cmp"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/kilroy-bot/kilroy-bot/secrets"
)

// scrubStage rewrites every file under the stage directory that holds a
// form of a secret the agent knows, each form replaced by [REDACTED]: a
// CLI echoes its key in its stream (a tool result showing a file it
// wrote), in session files under its isolated HOME, in Codex's shell
// snapshots. The stage directory is kept with the run and shown on its
// page, so it must never keep one. A file that cannot be rewritten is
// removed. Links are left alone: they point nowhere the agent could write
// a secret to that is not scrubbed here or refused at the checkpoint.
func (a *Agent) scrubStage(ctx context.Context, dir string) {
	forms := secretForms(a.secret)
	if len(forms) == 0 {
		return
	}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		if err := scrubFile(p, forms); err != nil {
			a.log.WarnContext(ctx, "a stage file could not be scrubbed of secrets; removing it", "file", p, "err", err)
			return os.Remove(p)
		}
		return nil
	})
	if err != nil {
		a.log.ErrorContext(ctx, "the stage directory could not be scrubbed of secrets", "dir", dir, "err", err)
	}
}

// secretForms are the forms of every value long enough to be a secret,
// longest first so that no form is cut by a shorter one.
func secretForms(values []string) [][]byte {
	var out [][]byte
	for _, v := range values {
		if len(v) < secrets.MinLen {
			continue
		}
		for _, f := range secrets.Forms(v) {
			out = append(out, []byte(f))
		}
	}
	slices.SortFunc(out, func(x, y []byte) int { return cmp.Compare(len(y), len(x)) })
	return out
}

func scrubFile(path string, forms [][]byte) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	out := b
	for _, f := range forms {
		out = bytes.ReplaceAll(out, f, []byte(redacted))
	}
	if bytes.Equal(out, b) {
		return nil
	}
	return os.WriteFile(path, out, 0) // an existing file keeps its mode
}
