package running

import (
	"testing"

	"github.com/racekit/racekit/harness/internal/testcp"
)

func TestMain(m *testing.M) { testcp.Main(m) }

var controlPlane = testcp.ControlPlane
