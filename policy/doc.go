// Package policy makes the pure decisions of a run: which build artifacts a
// run keeps out of its checkpoints and refuses in verify.artifacts, which
// environment its nodes get for their toolchains, and what a repository's
// `.kilroy/config.yml` says.
//
// # Artifact policy
//
// The `artifact_policy` block of the repository configuration (type
// ArtifactPolicy) is turned once per run into a Resolved policy by Resolve.
// Resolved is plain data: the runner writes it and its Hash into
// checkpoint.json, and a resumed run uses that snapshot (after CheckSnapshot)
// instead of resolving again, so a repository that changed in between does
// not change the rules of a run half way through.
//
// Resolution has three parts:
//
//   - Profiles. In mode auto (the default) marker files decide: rust
//     (Cargo.toml, rust-toolchain, rust-toolchain.toml), go (go.mod, go.work),
//     node (package.json, pnpm-lock.yaml, yarn.lock, package-lock.json),
//     python (pyproject.toml, requirements.txt, setup.py) and java (pom.xml,
//     build.gradle, settings.gradle). The repository root is checked first,
//     then its directories are walked in lexical order down to six levels
//     below the root (a marker at a/b/c/d/e/f/go.mod counts, one a level
//     deeper does not), skipping version-control, dependency and virtualenv
//     directories (see skippedDirs). No marker means the single profile
//     generic. Mode explicit takes profiles.explicit as given; mode disabled
//     uses no profile and sets no environment, but keeps the checkpoint and
//     verify rules.
//
//   - Environment. Each profile owns a few variables. A variable's value is
//     the first of: the host environment (non-empty), env.overrides[profile],
//     the profile's managed root, the built-in default. Managed roots are
//     keyed by profile (env.managed_roots.rust: cache/rust): a root relocates
//     the profile's caches and build output into fixed subdirectories
//     (rust: cargo-home, cargo-target; go: gopath; node: npm-cache,
//     pnpm-home; python: pip-cache; java: gradle-home, m2) but never the
//     toolchain installation (RUSTUP_HOME), so cargo keeps finding its
//     toolchains. An absolute root is used as is; a relative one lives under
//     <run-dir>/policy-managed-roots/, outside the worktree and on its
//     filesystem. Built-in defaults pin the usual HOME-relative locations to
//     absolute paths (so a node given its own HOME still finds them), except
//     CARGO_TARGET_DIR, which defaults to
//     <run-dir>/policy-managed-roots/cargo-target so build output never lands
//     in the worktree. GOMODCACHE follows the first GOPATH entry, and java
//     appends -Dmaven.repo.local= to MAVEN_OPTS only when it is absent.
//     Overrides may also set variables no profile owns.
//
//   - Paths. checkpoint.exclude_globs (defaults in DefaultExcludeGlobs)
//     decide what checkpoint commits leave out; verify.deny_globs (default:
//     the checkpoint excludes) and verify.allow_globs decide what
//     verify.artifacts refuses: a path is denied when a deny glob matches and
//     no allow glob does. Globs are doublestar patterns over slash-separated
//     repository-relative paths and are validated when the policy is read.
//
// # Repository configuration
//
// ParseRepoConfig reads `.kilroy/config.yml`: YAML, decoded strictly (an
// unknown key is an error that lists the known ones), validated against the
// JSON Schema of package schema and then by the rules the schema cannot
// express (globs, durations). Every problem is a *ConfigError carrying the
// file, line, column and key path, so the caller can annotate the line.
// Defaults are applied in one place (see withDefaults). A repository without
// the file gets DefaultRepoConfig.
//
// DecodeYAML reads other configuration files (the server policy file) the
// same way, against a schema and Go type of the caller's, and its Located
// places the problems the caller finds afterwards at their keys.
//
// The package does no I/O beyond reading the fs.FS it is handed and never
// reads the process environment: callers pass the host environment in.
package policy
