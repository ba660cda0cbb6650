package sandbox

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"time"
)

// SelfTest starts one jailed process and checks that it got its own user
// and pid namespaces, and the network namespace of the Sandbox's Network
// (for public, pasta attached; ErrNetwork matches its failures). The error says what is missing and the setting that
// fixes it; serve refuses to start on it.
func (s *Sandbox) SelfTest(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var out bytes.Buffer
	j := &Jail{Sandbox: s}
	res, err := Run(ctx, Cmd{
		Argv:   []string{"/bin/sh", "-c", "echo uid=$(id -u) pid=$$; readlink /proc/self/ns/net"},
		Env:    []string{"PATH=/usr/bin:/bin"},
		Stdout: &out, Stderr: &out, Jail: j,
	})
	if err != nil {
		return fmt.Errorf("sandbox self-test: %w", err)
	}
	all := strings.TrimSpace(out.String())
	if res.ExitCode != 0 {
		return fmt.Errorf("sandbox self-test: bubblewrap failed (exit %d): %s%s", res.ExitCode, firstLine(all), namespaceHint(all))
	}
	got, netns, _ := strings.Cut(all, "\n")
	if want := fmt.Sprintf("uid=%d pid=2", JailUID); got != want && got != fmt.Sprintf("uid=%d pid=1", JailUID) {
		return fmt.Errorf("sandbox self-test: the jailed process reported %q, want %q", got, want)
	}
	return s.checkNetns(netns)
}

// namespaceHint names the host setting behind bwrap's usual refusals.
func namespaceHint(msg string) string {
	switch {
	case strings.Contains(msg, "No permissions to creating new namespace"),
		strings.Contains(msg, "setting up uid map"), strings.Contains(msg, "Creating new namespace failed"):
		return "; user namespaces are off or restricted: set sysctl kernel.unprivileged_userns_clone=1 and " +
			"user.max_user_namespaces>0 (Ubuntu 24.04+: kernel.apparmor_restrict_unprivileged_userns=0, or an AppArmor profile for bwrap); " +
			"in a container, run with --security-opt seccomp=unconfined --security-opt apparmor=unconfined --security-opt systempaths=unconfined (docs/serve.md, Sandbox)"
	case strings.Contains(msg, "Can't mount proc"):
		// The runtime's masked /proc paths (kcore, keys, sys...) forbid a
		// fresh proc in a new namespace, whatever seccomp allows.
		return "; the container masks parts of /proc, so bubblewrap cannot mount its own: run with " +
			"--security-opt systempaths=unconfined as well as seccomp=unconfined and apparmor=unconfined (docs/serve.md, Sandbox)"
	case strings.Contains(msg, "Operation not permitted"):
		return "; the container runtime forbids mounts in new namespaces: run with --security-opt seccomp=unconfined " +
			"--security-opt apparmor=unconfined --security-opt systempaths=unconfined (docs/serve.md, Sandbox)"
	}
	return ""
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
