package image

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"

	"github.com/docker/cli/cli/config"
	"github.com/docker/cli/cli/config/configfile"
	"github.com/docker/cli/cli/config/credentials"
	"github.com/docker/cli/cli/config/types"
	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
)

// fileKeychain finds credentials in one docker config.json and nowhere
// else: not in the bot's environment or home directory (authn's default
// keychain looks there), and not through credential helpers, which would
// start processes.
type fileKeychain struct {
	cf *configfile.ConfigFile
}

// loadKeychain reads the auth file; no file means anonymous pulls. Errors
// name the file and never quote it, since it holds secrets.
func loadKeychain(path string) (authn.Keychain, error) {
	if path == "" {
		return fileKeychain{}, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("image auth file: %w", err)
	}
	defer f.Close()
	cf, err := config.LoadFromReader(f)
	if err != nil {
		return nil, fmt.Errorf("image auth file %s: not a docker config.json%s", path, jsonWhere(err))
	}
	if cf.CredentialsStore != "" || len(cf.CredentialHelpers) > 0 {
		return nil, fmt.Errorf("image auth file %s: credential helpers (credsStore, credHelpers) are not run; put the credentials under \"auths\"", path)
	}
	return fileKeychain{cf: cf}, nil
}

// jsonWhere says where a JSON error is without quoting the input.
func jsonWhere(err error) string {
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		return fmt.Sprintf(" (invalid JSON at byte %d)", syn.Offset)
	}
	var typ *json.UnmarshalTypeError
	if errors.As(err, &typ) {
		return fmt.Sprintf(" (%s: want %s)", typ.Field, typ.Type)
	}
	return ""
}

// Resolve looks the repository up first (podman's auth.json may hold
// credentials per repository), then its registry, the way docker does.
func (k fileKeychain) Resolve(target authn.Resource) (authn.Authenticator, error) {
	if k.cf == nil {
		return authn.Anonymous, nil
	}
	store := credentials.NewFileStore(k.cf)
	for _, key := range authKeys(target) {
		cfg, err := store.Get(key)
		if err != nil {
			return nil, fmt.Errorf("image credentials for %s: %w", target.RegistryStr(), err)
		}
		cfg.ServerAddress = ""
		if cfg != (types.AuthConfig{}) {
			return authn.FromConfig(authn.AuthConfig{
				Username:      cfg.Username,
				Password:      cfg.Password,
				Auth:          cfg.Auth,
				IdentityToken: cfg.IdentityToken,
				RegistryToken: cfg.RegistryToken,
			}), nil
		}
	}
	return authn.Anonymous, nil
}

// authKeys are the keys of config.json's "auths" that may hold the
// target's credentials, most specific first.
func authKeys(target authn.Resource) []string {
	reg := target.RegistryStr()
	if reg != dockerHubIndex && reg != dockerHub {
		return []string{target.String(), reg}
	}
	return []string{target.String(), authn.DefaultAuthKey, dockerHub, dockerHubIndex}
}

// httpGuard refuses plain HTTP to any host but the registries listed as
// insecure and loopback addresses. go-containerregistry also falls back to
// HTTP for private (RFC 1918) addresses; a server's policy names them.
//
// It also spares a loopback registry the HTTPS half of its version check.
// go-containerregistry tries "https://HOST/v2/" first and plain HTTP only
// when that fails, although every later request to a loopback registry is
// plain HTTP (name.Registry.Scheme), so an HTTPS answer could not have
// served the pull anyway: failing it at once saves a connection and a
// failed TLS handshake, about half the cost of resolving a tag there.
type httpGuard struct {
	next     http.RoundTripper
	insecure map[string]bool
}

// errLoopbackTLS fails the HTTPS version check of a loopback registry.
var errLoopbackTLS = errors.New("loopback registries are reached over plain HTTP")

func (g httpGuard) RoundTrip(req *http.Request) (*http.Response, error) {
	switch {
	case req.URL.Scheme == "http" && !g.insecure[req.URL.Host] && !loopback(req.URL.Hostname()):
		closeBody(req)
		return nil, fmt.Errorf("%w: %s (list it as an insecure registry to allow it)", ErrInsecure, req.URL.Host)
	case req.URL.Scheme == "https" && req.URL.Path == "/v2/" && loopback(req.URL.Hostname()):
		closeBody(req)
		return nil, errLoopbackTLS
	}
	return g.next.RoundTrip(req)
}

// closeBody closes the body of a request the guard does not send, as a
// RoundTripper must.
func closeBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}

// loopback: "localhost", "*.localhost" and loopback addresses.
func loopback(host string) bool {
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// insecureSet spells registries the way references do (docker.io is
// index.docker.io there).
func insecureSet(regs []string) (map[string]bool, error) {
	set := make(map[string]bool, len(regs))
	for _, r := range regs {
		reg, err := name.NewRegistry(r)
		if err != nil {
			return nil, fmt.Errorf("insecure registry %q: %w", r, err)
		}
		set[reg.RegistryStr()] = true
	}
	return set, nil
}
