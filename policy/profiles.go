package policy

import (
	"path/filepath"
	"strings"
)

// profileVar is one environment variable a profile owns.
type profileVar struct {
	name string
	// managedSub is the subdirectory of the profile's managed root the
	// variable points at; empty when a managed root does not move it.
	managedSub string
	// builtin is the last-resort value; empty leaves the variable unset.
	builtin func(d defaults) string
}

// defaults is what built-in values are derived from.
type defaults struct {
	home   string            // host HOME, may be empty
	runDir string            // absolute run directory
	env    map[string]string // variables resolved so far for the profile
}

// underHome joins HOME and rel, or yields "" without a HOME.
func underHome(rel string) func(defaults) string {
	return func(d defaults) string {
		if d.home == "" {
			return ""
		}
		return filepath.Join(d.home, rel)
	}
}

// goModCache follows Go's own rule: the first GOPATH entry plus pkg/mod.
func goModCache(d defaults) string {
	first, _, _ := strings.Cut(d.env["GOPATH"], string(filepath.ListSeparator))
	if first == "" {
		return ""
	}
	return filepath.Join(first, "pkg", "mod")
}

// profileVars lists the variables each toolchain profile owns, in the order
// they are resolved (GOPATH before GOMODCACHE). MAVEN_OPTS is handled by
// mavenOpts because it is appended to rather than replaced.
func profileVars(profile string) []profileVar {
	switch profile {
	case ProfileRust:
		return []profileVar{
			{"CARGO_HOME", "cargo-home", underHome(".cargo")},
			{"RUSTUP_HOME", "", underHome(".rustup")},
			{"CARGO_TARGET_DIR", "cargo-target", func(d defaults) string {
				return filepath.Join(d.runDir, ManagedRootsDir, "cargo-target")
			}},
		}
	case ProfileGo:
		return []profileVar{
			{"GOPATH", "gopath", underHome("go")},
			{"GOMODCACHE", "", goModCache},
		}
	case ProfileNode:
		return []profileVar{
			{"npm_config_cache", "npm-cache", underHome(".npm")},
			{"PNPM_HOME", "pnpm-home", underHome(filepath.Join(".local", "share", "pnpm"))},
		}
	case ProfilePython:
		return []profileVar{{"PIP_CACHE_DIR", "pip-cache", underHome(filepath.Join(".cache", "pip"))}}
	case ProfileJava:
		return []profileVar{{"GRADLE_USER_HOME", "gradle-home", underHome(".gradle")}}
	}
	return nil
}

// toolchainProfiles are the profiles that own variables, in lexical order.
func toolchainProfiles() []string {
	return []string{ProfileGo, ProfileJava, ProfileNode, ProfilePython, ProfileRust}
}

// knownProfiles are the names profiles.explicit and env.overrides accept.
func knownProfiles() []string {
	return append(toolchainProfiles(), ProfileGeneric)
}

// varOwner names the profile owning an environment variable, or "".
func varOwner(name string) string {
	if name == mavenOptsVar {
		return ProfileJava
	}
	for _, p := range toolchainProfiles() {
		for _, v := range profileVars(p) {
			if v.name == name {
				return p
			}
		}
	}
	return ""
}

// markerProfile maps a marker file name to its profile.
func markerProfile(name string) (string, bool) {
	switch name {
	case "Cargo.toml", "rust-toolchain", "rust-toolchain.toml":
		return ProfileRust, true
	case "go.mod", "go.work":
		return ProfileGo, true
	case "package.json", "pnpm-lock.yaml", "yarn.lock", "package-lock.json":
		return ProfileNode, true
	case "pyproject.toml", "requirements.txt", "setup.py":
		return ProfilePython, true
	case "pom.xml", "build.gradle", "settings.gradle":
		return ProfileJava, true
	}
	return "", false
}
