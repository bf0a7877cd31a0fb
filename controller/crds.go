package controller

import "embed"

// CRDs holds config/crd/*.yaml, the WebApp CustomResourceDefinition, so
// that racekit's binary and tests install it without a checkout.
//
//go:embed config/crd/*.yaml
var CRDs embed.FS
