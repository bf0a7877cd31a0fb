package explore

// Slots bound the runs under way at once across the work that shares
// them: a run takes one for its length, and a pair that must run side by
// side (the shrinker's scenario and its twin) takes two at once.
type Slots struct {
	ch chan struct{}
	// many lets one taker of more than one slot fill its hand at a time
	// (a lock of one token): two of them each holding part of what they
	// need could wait for each other for ever.
	many chan struct{}
}

// NewSlots returns n slots; DefaultParallel's when n is 0 or less.
func NewSlots(n int) *Slots {
	if n <= 0 {
		n = DefaultParallel()
	}
	return &Slots{ch: make(chan struct{}, n), many: make(chan struct{}, 1)}
}

// Take waits for n slots (at least one, at most all there are) and
// returns the function that gives them back.
func (s *Slots) Take(n int) (release func()) {
	n = min(max(n, 1), cap(s.ch))
	if n > 1 {
		s.many <- struct{}{}
		defer func() { <-s.many }()
	}
	for range n {
		s.ch <- struct{}{}
	}
	return func() {
		for range n {
			<-s.ch
		}
	}
}

// slots returns xo's shared slots, or slots of its own of xo.Parallel.
func (xo Options) slots() *Slots {
	if xo.Slots != nil {
		return xo.Slots
	}
	return NewSlots(xo.Parallel)
}
