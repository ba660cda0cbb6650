// Package caches lays out the toolchain caches of runs: the directories
// GOMODCACHE, GOCACHE, CARGO_HOME, npm's and pip's caches of a run's nodes
// point into (runner/sandbox CacheEnv), kept between the runs of one
// repository and never shared with another tenant or the host.
//
// The model. Under a root (<data-dir>/caches) every repository has a
// directory <installation>/<owner>/<repo>/ (scope repository), or every
// installation one, <installation>/_all/_all/ (scope installation); a
// local run's repository is local/<parent>/<name>-<hash of its path>/. Each
// holds cache/, which the run's jails bind read-write (one subdirectory
// per variable), and lock, the bot's own: every run using the caches holds
// it shared (Open) and its modification time is the caches' last use. The
// sweep (runner/gc) removes caches unused for its window or larger than
// its cap, holding the lock exclusively, so never under a running run.
// Names are sanitized: nothing a payload or a path holds becomes ".." or
// a separator.
package caches

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
)

// Scope is what shares one cache directory: a repository's runs, or an
// installation's (never more: installations are tenants).
type Scope string

// The scopes of sandbox.caches.scope; the zero value is ScopeRepository.
const (
	ScopeRepository   Scope = "repository"
	ScopeInstallation Scope = "installation"
)

// Names within a cache's directory, and the placeholder of the
// installation scope.
const (
	CacheName = "cache"
	LockName  = "lock"
	allName   = "_all"
	localName = "local"
)

// Dir is the directory of the caches of repository owner/name of
// installation inst under root, by scope.
func Dir(root string, scope Scope, inst int64, owner, name string) string {
	i := strconv.FormatInt(inst, 10)
	if scope == ScopeInstallation {
		return filepath.Join(root, i, allName, allName)
	}
	return filepath.Join(root, i, Sanitize(owner), Sanitize(name))
}

// InstallationDir holds every cache of installation inst under root, in
// either scope: what its uninstall deletes.
func InstallationDir(root string, inst int64) string {
	return filepath.Join(root, strconv.FormatInt(inst, 10))
}

// LocalDir is the directory of the caches of the local repository whose
// top-level directory is repoRoot (`kilroy-bot run`): keyed by its path,
// named after it so a user finds it.
func LocalDir(root, repoRoot string) string {
	sum := sha256.Sum256([]byte(filepath.Clean(repoRoot)))
	base := Sanitize(filepath.Base(repoRoot)) + "-" + hex.EncodeToString(sum[:4])
	return filepath.Join(root, localName, Sanitize(filepath.Base(filepath.Dir(repoRoot))), base)
}

// Bound is the directory of dir's caches that nodes see (dir/cache); ""
// for "".
func Bound(dir string) string {
	if dir == "" {
		return ""
	}
	return filepath.Join(dir, CacheName)
}

// Sanitize makes name one safe path element: lower case (GitHub compares
// names without case), every byte outside [a-z0-9._-] replaced by '_', and
// never "", "." or ".." or a name of the layout's own (_all, local). A
// name it changed gets a hash of the original, so two names never meet.
func Sanitize(name string) string {
	var b strings.Builder
	for _, c := range []byte(strings.ToLower(name)) {
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '.', c == '_', c == '-':
			b.WriteByte(c)
		default:
			b.WriteByte('_')
		}
	}
	s := b.String()
	if s == strings.ToLower(name) && s != "" && strings.Trim(s, ".") != "" && s != allName && s != localName &&
		!strings.HasPrefix(s, "_") {
		return s
	}
	sum := sha256.Sum256([]byte(name))
	return fmt.Sprintf("_%s-%s", strings.Trim(s, "."), hex.EncodeToString(sum[:4]))
}
