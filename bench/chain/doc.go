// Package chain measures what a pipeline node costs beyond its command: a
// chain of `true` tool nodes run by kilroy-bot (the engine, the stage
// files, a checkpoint commit per node), with the node sandbox off and on,
// against the git floor, `git add -A && git commit --allow-empty` in a
// loop on the same repository. The arms are interleaved round by round in
// one process, and take turns at going first, so the machine's drift hits
// them alike; per-node cost is the
// median interval between consecutive checkpoints (progress.ndjson) for
// kilroy-bot and between consecutive commits for the floor.
//
//	go test -run '^$' -bench 'Chain$' -benchtime 7x ./bench/chain
package chain
