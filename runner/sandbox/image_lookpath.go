package sandbox

import (
	"fmt"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// findProgram finds c's program as its process will: in the image of an
// image jail, in the host's view otherwise.
func findProgram(c Cmd) (string, error) {
	if host, ok := c.Jail.inBinds(c.Argv[0]); ok && c.Jail.Sandbox.image == nil {
		if !executable(host) {
			return "", &NotFoundError{Name: c.Argv[0]}
		}
		return c.Argv[0], nil
	}
	if c.Jail != nil && c.Jail.Sandbox.image != nil {
		return c.Jail.lookPathImage(c.Env, c.Dir, c.Argv[0])
	}
	return lookPath(c.Env, c.Dir, c.Argv[0])
}

// lookPathImage is lookPath in an image jail, with env and dir in host
// paths (as the bot gives them; Run rewrites them for the jail). A PATH
// entry or a path in one of the jail's writable roots (the workspace, the
// stage directory, a cache) is looked up there, since the jail shows them;
// any other in the image, resolving its links within the image. An
// absolute path that is not in the image may be a host program, which the
// jail binds read-only (an operator's agent command): it is taken when it
// can run there (hostProgramFits).
func (j *Jail) lookPathImage(env []string, dir, name string) (string, error) {
	im := j.Sandbox.image
	path, _ := Lookup(env, "PATH")
	if strings.Contains(name, "/") {
		p := name
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		host, bound := j.inBinds(p)
		switch {
		case bound && executable(host):
			return name, nil
		case bound:
			return "", &NotFoundError{Name: name, Image: im.Name}
		case j.inWritable(p) && executable(p):
			return name, nil
		case executableInImage(im.Root, p):
			return name, nil
		case filepath.IsAbs(name) && executable(p):
			if err := hostProgramFits(im, p, path); err != nil {
				return "", &NotFoundError{Name: name, Image: im.Name, Reason: err.Error()}
			}
			return name, nil
		}
		return "", &NotFoundError{Name: name, Image: im.Name}
	}
	for _, d := range filepath.SplitList(path) {
		if !filepath.IsAbs(d) {
			continue
		}
		p := filepath.Join(d, name)
		if j.inWritable(p) && executable(p) || !j.inWritable(p) && executableInImage(im.Root, p) {
			return p, nil
		}
	}
	return "", &NotFoundError{Name: name, Path: path, Image: im.Name}
}

// inWritable reports whether p, a host path, is in one of the jail's
// writable roots.
func (j *Jail) inWritable(p string) bool {
	for _, r := range j.roots() {
		if within(filepath.Clean(p), r.host) {
			return true
		}
	}
	return false
}

func executableInImage(root, p string) bool {
	st, err := statInRoot(root, p)
	return err == nil && st.Mode&unix.S_IFMT == unix.S_IFREG && st.Mode&0o111 != 0
}

// imageError is the message of a program missing from an image: what to
// change is the image, or the repository's choice of it.
func (e *NotFoundError) imageError() string {
	var what string
	switch {
	case e.Reason != "":
		what = fmt.Sprintf("`%s` cannot run in image %s: %s", e.Name, e.Image, e.Reason)
	case e.Path != "":
		what = fmt.Sprintf("`%s` not found in image %s (PATH %s)", e.Name, e.Image, e.Path)
	default:
		what = fmt.Sprintf("`%s` not found in image %s", e.Name, e.Image)
	}
	return what + "; " + ImageFix
}

// ImageFix says what to change when an image lacks a program.
const ImageFix = "use an image that has it (`image:` in .kilroy/config.yml, for the repository or the pipeline), " +
	"or `image: host` to run on the bot's own toolchain where the server allows it"

// HostFallback is the program a process in j runs for name, a program an
// image jail lacks that the host has in hostPATH (an agent CLI the bot's
// host installed): its host path, which the jail binds read-only when it
// can run there (a static binary, a script whose interpreter the image
// has; Run says why not otherwise). name itself when j has no image, has
// the program, or the host has not either.
func (j *Jail) HostFallback(env []string, dir, name, hostPATH string) string {
	if j == nil || j.Sandbox.image == nil || strings.Contains(name, "/") {
		return name
	}
	if _, err := j.lookPathImage(env, dir, name); err == nil {
		return name
	}
	if p, err := lookPath([]string{"PATH=" + hostPATH}, "", name); err == nil && filepath.IsAbs(p) {
		return p
	}
	return name
}
