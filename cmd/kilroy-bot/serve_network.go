package main

import (
	"fmt"

	"go.yaml.in/yaml/v3"

	"github.com/kilroy-bot/kilroy-bot/runner/sandbox"
)

// networkSetting is sandbox.network as written: public, none or host, or
// the booleans of older policies (true is public, false none);
// sandbox.ParseNetwork reads it.
type networkSetting string

func (n *networkSetting) UnmarshalYAML(v *yaml.Node) error {
	if v.Kind != yaml.ScalarNode {
		return fmt.Errorf("line %d: sandbox.network: write public, none or host", v.Line)
	}
	if _, err := sandbox.ParseNetwork(v.Value); err != nil {
		return fmt.Errorf("line %d: sandbox.network: %w", v.Line, err)
	}
	*n = networkSetting(v.Value)
	return nil
}

// hostNetworkBanner is the warning line every check summary carries when nodes
// share the host's network (sandbox.network: host).
func hostNetworkBanner(c serveConfig) string {
	if c.InsecureNoSandbox {
		return ""
	}
	if n, _ := sandbox.ParseNetwork(string(c.Policy.Sandbox.Network)); n != sandbox.NetworkHost {
		return ""
	}
	return "**This server runs pipeline nodes in the host's network** (`sandbox.network: host`): " +
		"they reach its loopback services, its abstract Unix sockets and its private networks."
}
