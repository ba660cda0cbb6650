package sandbox

import (
	"net/netip"
	"testing"
)

// Reaches judges an address as the run's namespace routes it.
func TestReaches(t *testing.T) {
	allow := []netip.Prefix{netip.MustParsePrefix("10.1.2.0/24")}
	for _, tt := range []struct {
		network  Network
		host     string
		want     bool
		loopback bool
		blocked  string
	}{
		{NetworkPublic, "127.0.0.1", false, true, ""},
		{NetworkPublic, "[::1]", false, true, ""},
		{NetworkPublic, "localhost", false, true, ""},
		{NetworkPublic, "ollama.localhost", false, true, ""},
		{NetworkPublic, "192.168.1.20", false, false, "192.168.0.0/16"},
		{NetworkPublic, "169.254.169.254", false, false, "169.254.0.0/16"},
		{NetworkPublic, "10.9.9.9", false, false, "10.0.0.0/8"},
		{NetworkPublic, "fd12::1", false, false, "fc00::/7"},
		{NetworkPublic, "10.1.2.3", true, false, ""}, // allowed
		{NetworkPublic, "203.0.113.9", true, false, ""},
		{NetworkPublic, "api.anthropic.com", true, false, ""},
		{"", "127.0.0.1", false, true, ""}, // the default is public
		{NetworkHost, "127.0.0.1", true, false, ""},
		{NetworkHost, "10.9.9.9", true, false, ""},
	} {
		ok, why := Reaches(tt.network, allow, tt.host)
		if ok != tt.want || why.Loopback != tt.loopback || (tt.blocked != "" && why.Blocked.String() != tt.blocked) {
			t.Errorf("Reaches(%q, %q) = %v, %+v; want %v, loopback %v, blocked %q", tt.network, tt.host, ok, why, tt.want, tt.loopback, tt.blocked)
		}
		if !ok && why.Error() == "" {
			t.Errorf("Reaches(%q, %q): no reason", tt.network, tt.host)
		}
	}
	if ok, why := Reaches(NetworkNone, nil, "api.anthropic.com"); ok || !why.NoNetwork {
		t.Errorf("network none reaches a public name: %v, %+v", ok, why)
	}
	host, err := hostAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range host {
		if ok, why := Reaches(NetworkPublic, nil, a.String()); ok {
			t.Errorf("network public reaches the host's address %s", a)
		} else if !a.IsLoopback() && why.Blocked == (netip.Prefix{}) && !why.Own {
			t.Errorf("the host's address %s: %+v, want it named as the host's own", a, why)
		}
	}
}
