package attractor

// shapeKind maps a Graphviz shape to the handler kind it selects.
func shapeKind(shape string) (Kind, bool) {
	switch shape {
	case "Mdiamond":
		return KindStart, true
	case "Msquare":
		return KindExit, true
	case "box":
		return KindCodergen, true
	case "parallelogram":
		return KindTool, true
	case "octagon":
		return KindVerify, true
	case "diamond":
		return KindConditional, true
	case "hexagon":
		return KindWaitHuman, true
	case "component":
		return KindParallel, true
	case "tripleoctagon":
		return KindFanIn, true
	case "house":
		return KindManagerLoop, true
	}
	return "", false
}

// knownShapes lists the shapes shapeKind accepts, for messages.
func knownShapes() []string {
	return []string{"Mdiamond", "Msquare", "box", "parallelogram", "octagon", "diamond",
		"hexagon", "component", "tripleoctagon", "house"}
}

// builtinKinds lists the handler types the engine ships with.
func builtinKinds() []Kind {
	return []Kind{KindStart, KindExit, KindCodergen, KindTool, KindVerify, KindVerifyArtifacts,
		KindConditional, KindWaitHuman, KindParallel, KindFanIn, KindManagerLoop}
}

// fidelityModes lists the context fidelity modes.
func fidelityModes() []string {
	return []string{"full", "truncate", "compact", "summary:low", "summary:medium", "summary:high"}
}
