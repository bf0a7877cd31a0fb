package scenarios

import "embed"

// Files holds the scenarios, so that racekit run works outside a checkout.
//
//go:embed *.txtar
var Files embed.FS

// Flagship is the scenario racekit run plays when it is given no file.
const Flagship = "deployment_conflict.txtar"
