package main

import (
	"fmt"
	"maps"
	"net/netip"
	"net/url"
	"slices"
	"strings"

	"github.com/kilroy-bot/kilroy-bot/attractor"
	"github.com/kilroy-bot/kilroy-bot/runner/agent"
	"github.com/kilroy-bot/kilroy-bot/runner/sandbox"
)

// endpointWarning is an agent CLI backend whose model endpoint its jail's
// network does not reach: CLI agents run in the node sandbox, so a model
// on this machine's loopback or a private address is out of reach with
// sandbox.network public (the default), and every endpoint with none.
// API backends call their model from the bot's own process and are not
// judged.
type endpointWarning struct {
	backend string // its name under agents.backends
	key     string // base_url, or env.NAME
	url     string
	msg     string // what is wrong
	fix     string // the setting that fixes it
}

func (w endpointWarning) String() string { return w.msg + "; " + w.fix }

// agentEndpointWarnings judges every CLI backend's base_url, and each
// value of its env that is an http(s) URL (an OPENAI_BASE_URL of a command
// CLI), against the network and allow of the sandbox; where names the
// file that sets them.
func agentEndpointWarnings(cfg agent.Config, network sandbox.Network, allow []netip.Prefix, where string) []endpointWarning {
	var out []endpointWarning
	for _, name := range slices.Sorted(maps.Keys(cfg.Backends)) {
		b := cfg.Backends[name]
		if b.Kind != agent.KindCLI {
			continue
		}
		urls := map[string]string{}
		if b.BaseURL != "" {
			urls["base_url"] = b.BaseURL
		}
		for k, v := range b.Env {
			if strings.HasPrefix(v, "http://") || strings.HasPrefix(v, "https://") {
				urls["env."+k] = v
			}
		}
		for _, key := range slices.Sorted(maps.Keys(urls)) {
			u, err := url.Parse(urls[key])
			if err != nil || u.Hostname() == "" {
				continue
			}
			ok, why := sandbox.Reaches(network, allow, u.Hostname())
			if ok {
				continue
			}
			out = append(out, endpointWarning{backend: name, key: key, url: urls[key],
				msg: fmt.Sprintf("agents.backends.%s.%s %s: the agent CLI runs in the node sandbox and will not reach it: %v",
					name, key, urls[key], why),
				fix: endpointFix(why, where)})
		}
	}
	return out
}

// endpointFix names the setting that lets a node reach what why says it
// cannot.
func endpointFix(why sandbox.Unreached, where string) string {
	switch {
	case why.NoNetwork:
		return "set sandbox.network: public (the default) in " + where + " for a model on a public address, or host"
	case why.Loopback, why.Own:
		return "set sandbox.network: host in " + where + " (nodes then share this machine's network: for your own machine and code), " +
			"or serve the model on a public address"
	}
	return fmt.Sprintf("add it to sandbox.network_allow in %s (network_allow: [%s]), or set sandbox.network: host there",
		where, netip.PrefixFrom(why.Addr, why.Addr.BitLen()))
}

// checkAgentsFile is validate's check of an agents file (or a server
// policy file): decoded as run and serve decode it, then a warning
// (agent_endpoint_unreachable) for each CLI backend endpoint its
// sandbox.network does not reach.
func checkAgentsFile(display string, src []byte) attractor.Diagnostics {
	var p serverPolicy
	if err := decodePolicy(display, src, &p); err != nil {
		return configDiagnostics(display, err)
	}
	network, _ := sandbox.ParseNetwork(string(p.Sandbox.Network)) // checked by decodePolicy
	allow, _ := sandbox.ParseCIDRs(p.Sandbox.NetworkAllow)
	var ds attractor.Diagnostics
	for _, w := range agentEndpointWarnings(p.Agents, network, allow, display) {
		line, col := findLine(src, w.url)
		ds = append(ds, attractor.Diagnostic{Rule: "agent_endpoint_unreachable", Severity: attractor.SeverityWarning,
			File: display, Line: line, Col: col, Message: w.msg, Fix: w.fix})
	}
	return ds
}
