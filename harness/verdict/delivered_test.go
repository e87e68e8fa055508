package verdict

import "testing"

func TestFabricLossRangeTwoSided(t *testing.T) {
	cases := []struct {
		up, at uint64
		lo, hi float64
		pass   bool
	}{
		{1000, 990, 0, 0.05, true},
		{1000, 900, 0, 0.05, false},    // 10% lost, above
		{1000, 990, 0.15, 0.85, false}, // 1% lost, below the control's floor
		{1000, 500, 0.15, 0.85, true},
		{0, 0, 0, 1, false}, // nothing seen: no sample
	}
	for _, c := range cases {
		v := FabricLossRange("f", c.up, c.at, c.lo, c.hi)
		if v.Pass != c.pass || v.Property != FabricLoss {
			t.Errorf("%d→%d in [%v,%v]: pass %v (%s)", c.up, c.at, c.lo, c.hi, v.Pass, v.Message)
		}
	}
}

func TestDeliveredRangeAndMark(t *testing.T) {
	rate := []float64{1e6, 16e6, 16e6, 16e6, 2e6}
	if v := DeliveredRange("f", rate, 12e6, 18.5e6); !v.Pass || v.Samples != 3 {
		t.Errorf("16M in 12M..18.5M: %s", v.Message)
	}
	if v := DeliveredRange("f", rate, 17e6, 18.5e6); v.Pass {
		t.Errorf("16M in 17M..18.5M passed: %s", v.Message)
	}
	if v := DeliveredMark("f", map[int]uint64{0: 2500}, 0); !v.Pass {
		t.Errorf("all DSCP 0: %s", v.Message)
	}
	if v := DeliveredMark("f", map[int]uint64{0: 2499, 46: 1}, 0); v.Pass {
		t.Errorf("one packet still marked 46 passed: %s", v.Message)
	}
	if v := DeliveredMark("f", map[int]uint64{}, 46); v.Pass {
		t.Errorf("nothing delivered passed: %s", v.Message)
	}
}

func TestClassDropRange(t *testing.T) {
	if v := ClassDropRange("ef", 4000, 0, 0, 0.01); !v.Pass || v.Samples != 4000 {
		t.Errorf("no drop: %s", v.Message)
	}
	if v := ClassDropRange("ef", 4000, 100, 0, 0.01); v.Pass {
		t.Errorf("2.4%% dropped passed a 1%% bound: %s", v.Message)
	}
	if v := ClassDropRange("fifo", 6000, 4000, 0.2, 0.8); !v.Pass {
		t.Errorf("40%% in 20..80%%: %s", v.Message)
	}
	if v := ClassDropRange("fifo", 9000, 100, 0.2, 0.8); v.Pass {
		t.Errorf("1%% passed a 20%% floor: %s", v.Message)
	}
	if v := ClassDropRange("idle", 0, 0, 0, 1); v.Pass {
		t.Errorf("an idle class passed: %s", v.Message)
	}
}
