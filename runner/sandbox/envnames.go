package sandbox

import (
	"path/filepath"
	"runtime"
	"strings"
)

// allowedHostVar reports whether a host variable may reach a node. The list
// is what a build needs to find its tools, caches, locale and network, and
// nothing that grants the bot's own powers: no SSH_AUTH_SOCK (the bot's SSH
// keys), no XDG_* (an isolated HOME must not lead back to the real config),
// no LD_* (loader injection), no credentials-by-URL like PIP_INDEX_URL.
// Proxy variables pass because builds need the network; a proxy password in
// them is the host's own choice.
func allowedHostVar(name string) bool {
	switch name {
	case "PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TZ", "TERM", "TMPDIR":
		return true
	case "GOROOT", "GOPATH", "GOBIN", "GOMODCACHE", "GOCACHE", "GOENV", "GOFLAGS", "GOTOOLCHAIN",
		"GOPROXY", "GOSUMDB", "GONOSUMDB", "GONOSUMCHECK", "GONOPROXY", "GOPRIVATE", "GOINSECURE":
		return true
	case "CARGO_HOME", "RUSTUP_HOME", "RUSTUP_TOOLCHAIN", "CARGO_TARGET_DIR":
		return true
	case "NODE_PATH", "NVM_DIR", "NVM_BIN", "npm_config_cache", "NPM_CONFIG_CACHE", "PNPM_HOME",
		"COREPACK_HOME", "VOLTA_HOME", "BUN_INSTALL", "DENO_DIR":
		return true
	case "PYENV_ROOT", "VIRTUAL_ENV", "PIP_CACHE_DIR", "UV_CACHE_DIR":
		return true
	case "PYENV_VERSION", "NODENV_VERSION", "RBENV_VERSION": // which version a shim on PATH runs
		return true
	case "JAVA_HOME", "GRADLE_USER_HOME", "MAVEN_OPTS", "MAVEN_HOME", "M2_HOME":
		return true
	case "SSL_CERT_FILE", "SSL_CERT_DIR", "NODE_EXTRA_CA_CERTS", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE",
		"http_proxy", "https_proxy", "no_proxy", "all_proxy", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY":
		return true
	}
	return strings.HasPrefix(name, "LC_")
}

// secretName reports whether a name looks like it holds a secret. It is
// matched on the upper-cased name, on every layer, so a secret cannot come
// back through policy or stage variables either.
func secretName(name string) bool {
	n := strings.ToUpper(name)
	switch n {
	case "TOKEN", "SECRET", "PASSWORD", "DATABASE_URL", "KILROY_DATABASE_URL":
		return true // GITHUB_TOKEN, GH_TOKEN, *_API_KEY and the like match below
	}
	if strings.HasPrefix(n, "KILROY_WEBHOOK_SECRET") || strings.HasPrefix(n, "KILROY_PRIVATE_KEY") {
		return true // includes the *_FILE variants: they lead to the secret
	}
	for _, part := range []string{"_TOKEN", "SECRET", "PASSWORD", "PASSWD", "PRIVATE_KEY",
		"API_KEY", "APIKEY", "ACCESS_KEY", "AUTHTOKEN", "CREDENTIAL"} {
		if strings.Contains(n, part) {
			return true
		}
	}
	return false
}

// pinToolchain sets toolchain locations that default to paths under HOME
// to those paths, computed from the real HOME, unless they are already set.
// A node given its own HOME (agent CLIs) then still finds the toolchains
// and caches a tool node finds. Locations under HOME that only hold
// settings or caches other tools recreate (npm, pip) are left alone.
func pinToolchain(env, host map[string]string) {
	home := host["HOME"]
	if filepath.IsAbs(home) {
		setUnset(env, "CARGO_HOME", filepath.Join(home, ".cargo"))
		setUnset(env, "RUSTUP_HOME", filepath.Join(home, ".rustup"))
		setUnset(env, "GOPATH", filepath.Join(home, "go"))
	}
	// GOMODCACHE follows the first GOPATH entry, whoever set GOPATH.
	if gopath, _, _ := strings.Cut(env["GOPATH"], string(filepath.ListSeparator)); filepath.IsAbs(gopath) {
		setUnset(env, "GOMODCACHE", filepath.Join(gopath, "pkg", "mod"))
	}
	// Where os.UserCacheDir and os.UserConfigDir would put them.
	if dir := userDir(host, "XDG_CACHE_HOME", ".cache", "Library/Caches"); dir != "" {
		setUnset(env, "GOCACHE", filepath.Join(dir, "go-build"))
	}
	if dir := userDir(host, "XDG_CONFIG_HOME", ".config", "Library/Application Support"); dir != "" {
		setUnset(env, "GOENV", filepath.Join(dir, "go", "env")) // keeps `go env -w` settings
	}
}

// userDir mirrors os.UserCacheDir / os.UserConfigDir for the given host
// environment (not the process's): the XDG variable if absolute, else a
// directory under HOME. It returns "" when it cannot be derived.
func userDir(host map[string]string, xdg, unixRel, darwinRel string) string {
	home := host["HOME"]
	if runtime.GOOS == "darwin" {
		if filepath.IsAbs(home) {
			return filepath.Join(home, darwinRel)
		}
		return ""
	}
	if d := host[xdg]; filepath.IsAbs(d) {
		return d
	}
	if filepath.IsAbs(home) {
		return filepath.Join(home, unixRel)
	}
	return ""
}

func setUnset(env map[string]string, k, v string) {
	if env[k] == "" {
		env[k] = v
	}
}
