package attractor

// prewarm hands a Prewarmer host the request the first process of node id
// will make when ln runs it next: for a built-in tool or verify node with
// a command, the request its Shell call builds from the stage newStage
// will prepare (the same directory, environment and command). Nothing is
// prepared for a node the visit limit will stop, or that a custom handler
// runs. It changes nothing on disk: the stage directory is prepared when
// the node starts.
func (r *run) prewarm(ln *lane, id string) {
	pw, ok := r.cfg.Host.(Prewarmer)
	n := r.p.Node(id)
	if !ok || n == nil {
		return
	}
	command := r.firstCommand(n)
	if command == "" {
		return
	}
	if _, over := r.pastVisitLimit(n, r.st.Visits[n.ID]+1); over {
		return
	}
	s := &Stage{
		RunID: r.cfg.RunID, Node: n, Dir: r.stageDir(n), Workspace: r.cfg.Workspace,
		Predecessor: ln.prev, PredecessorOutcome: ln.prevOutcome,
	}
	s.Env = stageEnv(s)
	pw.Prewarm(s.shellRequest("", command, s.timeout()))
}

// firstCommand is the shell command n's handler runs first, when the
// engine's own handler runs n and starts with one (toolHandler,
// verifyHandler); "" otherwise.
func (r *run) firstCommand(n *Node) string {
	if _, custom := r.customHandler(n); custom {
		return ""
	}
	switch n.Kind {
	case KindTool:
		return n.ToolCommand
	case KindVerify:
		return n.Command
	}
	return ""
}
