package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ErrNotFound matches (errors.Is) every *NotFoundError.
var ErrNotFound = errors.New("executable not found")

// NotFoundError reports a program that is not in the PATH of a node's
// environment. Callers turn it into a node failure naming the program.
type NotFoundError struct {
	Name string // Argv[0] as given
	Path string // the PATH that was searched; empty for a name with a slash
	// Image names the image it was looked for in; empty: the host.
	Image string
	// Reason says why a program that is there cannot run (a host
	// program an image jail cannot run).
	Reason string
}

func (e *NotFoundError) Error() string {
	if e.Image != "" {
		return e.imageError()
	}
	switch {
	case strings.Contains(e.Name, "/"):
		return fmt.Sprintf("`%s` not found or not executable", e.Name)
	case e.Path == "":
		return fmt.Sprintf("`%s` not found in PATH (PATH is empty)", e.Name)
	default:
		return fmt.Sprintf("`%s` not found in PATH (%s)", e.Name, e.Path)
	}
}

// Is makes errors.Is(err, ErrNotFound) hold.
func (e *NotFoundError) Is(target error) bool { return target == ErrNotFound }

// LookPath finds name the way the child would: in the PATH of env (the
// last PATH entry wins, as in exec), not in the bot's own PATH. A name with
// a slash is used as is. The error is a *NotFoundError.
func LookPath(env []string, name string) (string, error) {
	return lookPath(env, "", name)
}

// lookPath is LookPath for a child running in dir, against which a relative
// name with a slash is checked. Relative PATH entries are skipped: the child
// would resolve them in its working directory, usually the repository under
// test, where anyone who can push could plant a `git` or a `claude`.
func lookPath(env []string, dir, name string) (string, error) {
	if strings.Contains(name, "/") {
		p := name
		if !filepath.IsAbs(p) && dir != "" {
			p = filepath.Join(dir, p)
		}
		if !executable(p) {
			return "", &NotFoundError{Name: name}
		}
		return name, nil // exec resolves a relative Path against Dir itself
	}
	path, _ := Lookup(env, "PATH")
	for _, d := range filepath.SplitList(path) {
		if !filepath.IsAbs(d) {
			continue
		}
		if p := filepath.Join(d, name); executable(p) {
			return p, nil
		}
	}
	return "", &NotFoundError{Name: name, Path: path}
}

func executable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}
