// Package sandbox is the only place in kilroy-bot that starts a process or
// builds a child environment: nothing else calls exec.Command or reads
// os.Environ.
//
// Processes. Run behaves like exec.Cmd.Run with the guarantees a pipeline
// node needs. The child leads its own process group; a timeout or a
// cancelled context sends SIGTERM to the whole group and SIGKILL after
// Cmd.KillGrace, so grandchildren die with it. Run owns the pipes behind
// Cmd.Stdout and Cmd.Stderr: once the main process has exited it waits at
// most Cmd.WaitDelay for the rest of the group to let go of them, then kills
// the group, so a daemonised grandchild cannot hang the caller. The group is
// killed whenever Run returns; only a process that left the group (setsid)
// escapes. Stdin is empty unless given, and Argv[0] is looked up in the PATH
// of Cmd.Env, never in the bot's own PATH.
//
// Jails. A Cmd with a Jail runs under bubblewrap with the Sandbox's
// namespaces, mounts and limits; nothing of it runs before its limits and
// cgroups apply. Every bind is opened by the bot without following a link a
// node could have planted and handed to bwrap as a descriptor (binder).
// A jail shows the run's directories (worktree, stage directory, managed
// roots, caches, git directory) at fixed paths that name nothing of the
// host, and Run rewrites the host paths a Cmd names into them
// (jail_view.go). Prewarm starts the bwrap of a Run expected next, so that it makes its
// mounts and joins its cgroups before the Run adopts it; any other Run
// starts a fresh bwrap. Close ends the prewarmed jails. A Sandbox made
// WithImage builds its jails on an unpacked OCI image instead of the host's
// system directories (image_root.go).
//
// Output. CappedFile and Tail bound what a chatty process costs. Both keep
// the end of the output, where failures are reported, and say how much was
// dropped.
//
// Environment. NodeEnv builds the environment of every node kind (tool,
// verify, agent CLI, API-agent tools, hooks) from one recipe, so all of them
// see the same toolchain and none sees a bot secret: allowlisted host
// variables, artifact policy variables, toolchain locations pinned to
// absolute paths under the real HOME, an optional HOME override, stage
// variables, per-kind extras, and finally every secret stripped.
package sandbox
