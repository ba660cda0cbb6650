package runs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kilroy-bot/kilroy-bot/bench/internal/fixture"
)

// usage is what the data dirs of all replicas hold.
type usage struct {
	bytes    int64    // every file
	runBytes int64    // the files in runs/
	runDirs  []string // run ids of the directories in runs/
	branches []string // run ids of the run branches in the mirrors
}

func (u usage) String() string {
	return fmt.Sprintf("%d bytes (%d in runs/), %d run dirs, %d run branches", u.bytes, u.runBytes, len(u.runDirs), len(u.branches))
}

func (u usage) report(b *testing.B, when string) {
	b.ReportMetric(float64(u.bytes), when+"-bytes")
	b.ReportMetric(float64(u.runBytes), when+"-run-bytes")
	b.ReportMetric(float64(len(u.runDirs)), when+"-rundirs")
	b.ReportMetric(float64(len(u.branches)), when+"-branches")
}

// usage measures every replica's data dir.
func (bn *bench) usage() usage {
	b := bn.b
	git, err := fixture.NewGit(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	var u usage
	for _, r := range bn.replicas {
		if err := u.add(git, r.dataDir); err != nil {
			b.Fatal(err)
		}
	}
	return u
}

func (u *usage) add(git *fixture.Git, dataDir string) error {
	runsDir := filepath.Join(dataDir, "runs")
	err := filepath.WalkDir(dataDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			info, err := d.Info()
			if err != nil {
				return err
			}
			u.bytes += info.Size()
			if strings.HasPrefix(p, runsDir+string(filepath.Separator)) {
				u.runBytes += info.Size()
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("size of %s: %w", dataDir, err)
	}
	runs, err := os.ReadDir(runsDir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	for _, e := range runs {
		u.runDirs = append(u.runDirs, e.Name())
	}
	mirrors, err := filepath.Glob(filepath.Join(dataDir, "mirrors", "*", "*.git"))
	if err != nil {
		return err
	}
	for _, m := range mirrors {
		out, err := git.Run(m, nil, "for-each-ref", "--format=%(refname:lstrip=2)", "refs/heads/kilroy/run/")
		if err != nil {
			return err
		}
		for _, ref := range strings.Fields(out) {
			u.branches = append(u.branches, path.Base(ref))
		}
	}
	return nil
}

// check says what is wrong with the data dirs after the sweep: a run
// directory or run branch of an old run left, or of a kept run missing.
func (u usage) check(old, kept []string) error {
	var errs []error
	for _, what := range []struct {
		name string
		ids  []string
	}{{"run directory", u.runDirs}, {"run branch", u.branches}} {
		for _, id := range what.ids {
			switch {
			case slices.Contains(old, id):
				errs = append(errs, fmt.Errorf("%s of run %s, older than the window, is left", what.name, id))
			case !slices.Contains(kept, id):
				errs = append(errs, fmt.Errorf("%s %s is of no run of the benchmark", what.name, id))
			}
		}
		for _, id := range kept {
			if !slices.Contains(what.ids, id) {
				errs = append(errs, fmt.Errorf("%s of run %s, inside the window, was removed", what.name, id))
			}
		}
	}
	if len(errs) > 10 {
		errs = append(errs[:10], fmt.Errorf("and %d more", len(errs)-10))
	}
	return errors.Join(errs...)
}
