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
				"relative root %q leaves %s/; use a path inside it or an absolute one", dir, ManagedRootsDir))
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
