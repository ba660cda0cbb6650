package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
)

// cacheVar is a variable through which a node writes a cache (module
// downloads, build results) and the subdirectory of the run's cache
// directory it points at.
type cacheVar struct{ name, dir string }

// cacheVars are every cache variable a node gets. They point into the
// run's cache directory, the repository's own (runner/caches), never at the
// host's caches: Go, Cargo, npm and pip trust what they find in a cache,
// so a cache two tenants share carries one's code into the other's runs.
var cacheVars = []cacheVar{
	{"GOPATH", "gopath"}, {"GOMODCACHE", "gomodcache"}, {"GOCACHE", "gocache"},
	{"CARGO_HOME", "cargo-home"},
	{"npm_config_cache", "npm"}, {"NPM_CONFIG_CACHE", "npm"}, {"PNPM_HOME", "pnpm-home"},
	{"COREPACK_HOME", "corepack"}, {"BUN_INSTALL", "bun"}, {"DENO_DIR", "deno"},
	{"PIP_CACHE_DIR", "pip"}, {"UV_CACHE_DIR", "uv"},
	{"GRADLE_USER_HOME", "gradle-home"},
}

// mavenRepoDir is the subdirectory that holds Maven's local repository
// (-Dmaven.repo.local, which no variable of its own sets).
const mavenRepoDir = "m2"

// IsCacheVar reports whether name is a cache variable, one CacheEnv sets.
func IsCacheVar(name string) bool {
	return slices.ContainsFunc(cacheVars, func(v cacheVar) bool { return v.name == name })
}

// CacheEnv returns every cache variable pointed at its subdirectory of
// dir, the run's cache directory; nil when dir is "".
func CacheEnv(dir string) map[string]string {
	if dir == "" {
		return nil
	}
	env := make(map[string]string, len(cacheVars))
	for _, v := range cacheVars {
		env[v.name] = filepath.Join(dir, v.dir)
	}
	return env
}

// CacheMavenRepo is Maven's local repository in the run's cache directory
// dir; "" when dir is "".
func CacheMavenRepo(dir string) string {
	if dir == "" {
		return ""
	}
	return filepath.Join(dir, mavenRepoDir)
}

// MakeCacheDirs makes dir and one subdirectory of it per cache variable,
// each with mkdir, which follows no symbolic link at its last element: a
// link a node left in dir is neither followed nor replaced (inside the
// jail it leads only to what the jail shows).
func MakeCacheDirs(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("sandbox: cache directory: %w", err)
	}
	subs := []string{mavenRepoDir}
	for _, v := range cacheVars {
		subs = append(subs, v.dir)
	}
	slices.Sort(subs)
	for _, sub := range slices.Compact(subs) {
		if err := os.Mkdir(filepath.Join(dir, sub), 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("sandbox: cache directory: %w", err)
		}
	}
	return nil
}
