package policy

import (
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

var envNamePattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// validatePolicy checks what the schema cannot (globs, cross-field rules)
// and, for callers that build an ArtifactPolicy in Go, what it can. at is
// the path of the block, normally artifact_policy.
func validatePolicy(p ArtifactPolicy, at keyPath) []fieldError {
	var errs []fieldError
	errs = append(errs, validateProfiles(p.Profiles, at.with("profiles"))...)
	errs = append(errs, validateOverrides(p.Env.Overrides, at.with("env").with("overrides"))...)
	errs = append(errs, validateRoots(p.Env.ManagedRoots, at.with("env").with("managed_roots"))...)
	errs = append(errs, validateGlobs(p.Checkpoint.ExcludeGlobs, at.with("checkpoint").with("exclude_globs"))...)
	errs = append(errs, validateGlobs(p.Verify.DenyGlobs, at.with("verify").with("deny_globs"))...)
	errs = append(errs, validateGlobs(p.Verify.AllowGlobs, at.with("verify").with("allow_globs"))...)
	return errs
}

func validateProfiles(p ProfilesPolicy, at keyPath) []fieldError {
	var errs []fieldError
	switch p.Mode {
	case "", ModeAuto, ModeDisabled:
		if len(p.Explicit) > 0 {
			errs = append(errs, fieldErrorf(at.with("explicit"),
				"only used with mode: explicit; set profiles.mode: explicit or remove the list"))
		}
	case ModeExplicit:
		if len(p.Explicit) == 0 {
			errs = append(errs, fieldErrorf(at.with("explicit"),
				"mode explicit needs at least one profile (one of %s)", strings.Join(knownProfiles(), ", ")))
		}
	default:
		errs = append(errs, fieldErrorf(at.with("mode"), "unknown mode %q; use auto, explicit or disabled", p.Mode))
	}
	for i, name := range p.Explicit {
		if !slices.Contains(knownProfiles(), name) {
			errs = append(errs, fieldErrorf(at.with("explicit").with(i),
				"unknown profile %q (known: %s)", name, strings.Join(knownProfiles(), ", ")))
		}
	}
	return errs
}

func validateOverrides(overrides map[string]map[string]string, at keyPath) []fieldError {
	var errs []fieldError
	for _, prof := range sortedKeys(overrides) {
		if !slices.Contains(knownProfiles(), prof) {
			errs = append(errs, fieldErrorf(at.with(prof), "unknown profile %q (known: %s)",
				prof, strings.Join(knownProfiles(), ", ")))
			continue
		}
		for _, name := range sortedKeys(overrides[prof]) {
			errs = append(errs, validateOverride(overrides, prof, name, at.with(prof).with(name))...)
		}
	}
	return errs
}

func validateOverride(overrides map[string]map[string]string, prof, name string, at keyPath) []fieldError {
	switch owner := varOwner(name); {
	case !envNamePattern.MatchString(name):
		return []fieldError{fieldErrorf(at, "%q is not an environment variable name", name)}
	case owner != "" && owner != prof:
		return []fieldError{fieldErrorf(at, "%s belongs to profile %s; set it under env.overrides.%s", name, owner, owner)}
	case overrides[prof][name] == "":
		return []fieldError{fieldErrorf(at, "empty value; remove the key to keep the default")}
	case isPathVar(name) && !inRun(overrides[prof][name]):
		return []fieldError{fieldErrorf(at, "%q is a host path: a repository's variables are never mounts, so a "+
			"node sees nothing of the host there (only the worktree, the run's directories, its own /tmp and HOME, "+
			"and the repository's caches); remove the key, or give a path relative to the worktree",
			overrides[prof][name])}
	}
	for _, other := range sortedKeys(overrides) {
		if _, dup := overrides[other][name]; dup && other < prof {
			return []fieldError{fieldErrorf(at, "%s is also set under env.overrides.%s; set it for one profile only", name, other)}
		}
	}
	return nil
}

func validateRoots(roots map[string]string, at keyPath) []fieldError {
	var errs []fieldError
	for _, prof := range sortedKeys(roots) {
		dir := roots[prof]
		switch {
		case !slices.Contains(toolchainProfiles(), prof):
			errs = append(errs, fieldErrorf(at.with(prof), "unknown profile %q (known: %s)",
				prof, strings.Join(toolchainProfiles(), ", ")))
		case dir == "":
			errs = append(errs, fieldErrorf(at.with(prof), "empty directory; remove the key or name a directory"))
		case !filepath.IsAbs(dir) && !filepath.IsLocal(dir):
			errs = append(errs, fieldErrorf(at.with(prof),
				"relative root %q leaves %s/; use a path inside it", dir, ManagedRootsDir))
		case !inRun(dir):
			errs = append(errs, fieldErrorf(at.with(prof), "%q is a host path; a repository chooses no host "+
				"directory (its caches are kept between runs already, per repository); remove the key, or use a "+
				"relative root, which lives in %s/ of the run", dir, ManagedRootsDir))
		}
	}
	return errs
}

// validateGlobs checks every glob with doublestar, the only glob engine the
// product uses, so a pattern that would never match fails early.
func validateGlobs(globs []string, at keyPath) []fieldError {
	var errs []fieldError
	for i, g := range globs {
		switch {
		case strings.TrimSpace(g) == "":
			errs = append(errs, fieldErrorf(at.with(i), "empty glob; remove it"))
		case strings.HasPrefix(g, "/"):
			errs = append(errs, fieldErrorf(at.with(i),
				"glob %q is absolute; paths are repository-relative, write %q", g, strings.TrimLeft(g, "/")))
		case !doublestar.ValidatePattern(g):
			errs = append(errs, fieldErrorf(at.with(i),
				"invalid glob %q: check brackets, braces and escapes (doublestar syntax, e.g. **/dist/**)", g))
		}
	}
	return errs
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// pathVars are the variables that name a toolchain's or a cache's
// directory (runner/sandbox toolchainVars and cacheVars, and
// CARGO_TARGET_DIR). The sandbox once bound such a directory into the
// jail; now only the bot's own configuration does, and a repository that
// points one at the host learns so at validation instead of from a
// missing directory at run time.
var pathVars = []string{
	"GOROOT", "RUSTUP_HOME", "JAVA_HOME", "MAVEN_HOME", "M2_HOME", "NVM_DIR", "PYENV_ROOT", "VOLTA_HOME", "VIRTUAL_ENV",
	"GOPATH", "GOMODCACHE", "GOCACHE", "CARGO_HOME", "CARGO_TARGET_DIR", "npm_config_cache", "NPM_CONFIG_CACHE",
	"PNPM_HOME", "COREPACK_HOME", "BUN_INSTALL", "DENO_DIR", "PIP_CACHE_DIR", "UV_CACHE_DIR", "GRADLE_USER_HOME",
}

// IsPathVar reports whether name is a toolchain or cache variable, whose
// value a repository may set only to a path of its run.
func IsPathVar(name string) bool { return isPathVar(name) }

func isPathVar(name string) bool { return slices.Contains(pathVars, name) }

// inRun reports whether a directory a repository names is one of its
// run: a relative path (to the worktree, or the managed roots). The run's
// absolute directories are not known when a config is validated, and
// even the jail's own /tmp is the host's where nodes run unjailed, so an
// absolute path is the host's.
func inRun(dir string) bool { return !filepath.IsAbs(dir) }
