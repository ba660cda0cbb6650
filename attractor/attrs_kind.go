package attractor

// shapeKind maps a Graphviz shape to the handler kind it selects.
func shapeKind(shape string) (Kind, bool) {
	switch shape {
	case "Mdiamond", "circle":
		return KindStart, true
	case "Msquare", "doublecircle":
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
		"hexagon", "component", "tripleoctagon", "house", "circle", "doublecircle"}
}

// graphvizShape reports whether s is one of Graphviz's own node shapes:
// a shape the engine has no handler for runs as an agent step, but one
// that is not even a Graphviz shape and is close to ours is a typo.
func graphvizShape(s string) bool {
	switch s {
	case "box", "polygon", "ellipse", "oval", "circle", "point", "egg", "triangle", "plaintext", "plain",
		"diamond", "trapezium", "parallelogram", "house", "pentagon", "hexagon", "septagon", "octagon",
		"doublecircle", "doubleoctagon", "tripleoctagon", "invtriangle", "invtrapezium", "invhouse",
		"Mdiamond", "Msquare", "Mcircle", "rect", "rectangle", "square", "star", "none", "underline",
		"cylinder", "note", "tab", "folder", "box3d", "component", "promoter", "cds", "terminator", "utr",
		"primersite", "restrictionsite", "fivepoverhang", "threepoverhang", "noverhang", "assembly",
		"signature", "insulator", "ribosite", "rnastab", "proteasesite", "proteinstab", "rpromoter",
		"rarrow", "larrow", "lpromoter":
		return true
	}
	return false
}

// kilroyLoopShape reports Kilroy's loop.begin/loop.end sentinels.
func kilroyLoopShape(s string) bool { return s == "trapezium" || s == "invtrapezium" }

// builtinKinds lists the handler types the engine ships with.
func builtinKinds() []Kind {
	return []Kind{KindStart, KindExit, KindCodergen, KindTool, KindVerify, KindVerifyArtifacts,
		KindConditional, KindWaitHuman, KindParallel, KindFanIn, KindManagerLoop}
}

// fidelityModes lists the context fidelity modes.
func fidelityModes() []string {
	return []string{"full", "truncate", "compact", "summary:low", "summary:medium", "summary:high"}
}
