package scheduler

import (
	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	"github.com/flotilla/flotilla/internal/core/scheduler/framework"
)

// choose picks up to want of the ranked candidates. Without select plugins they are the first
// want. With them, each pick is the best-ranked candidate every plugin admits; when none is
// left, the remaining slots go, in rank order, to candidates refused only with Demoted. It marks
// each chosen candidate and records each refusal.
func choose(ranked []*candidate, want int, sels []framework.SelectPlugin) []*candidate {
	if len(sels) == 0 {
		n := min(want, len(ranked))
		for _, cd := range ranked[:n] {
			cd.chosen = true
		}
		return ranked[:n]
	}
	clusters := make([]*clusterv1.ManagedCluster, len(ranked))
	for i, cd := range ranked {
		clusters[i] = cd.cluster
	}
	for _, s := range sels {
		s.Start(clusters)
	}
	chosen := make([]*candidate, 0, min(want, len(ranked)))
	chosen = pass(ranked, want, sels, false, chosen)
	if len(chosen) < want {
		var rest []*candidate
		for _, cd := range ranked {
			if !cd.chosen && cd.refusal.CodeOf() == framework.Demoted {
				rest = append(rest, cd)
			}
		}
		chosen = pass(rest, want, sels, true, chosen)
	}
	// Say why a refused cluster is not chosen as things ended, not as they were when refused.
	for _, cd := range ranked {
		if !cd.chosen && cd.refusal != nil {
			for _, s := range sels {
				if st := s.Admit(cd.cluster); st != nil && st.Code != framework.Success && st.Code != framework.Warning {
					cd.refusal, cd.refusedBy = st, s.Name()
					break
				}
			}
		}
	}
	return chosen
}

// pass offers pool (in rank order) to the select plugins until want are chosen. Refused
// candidates wait in pending, and are offered again, best-ranked first, whenever a plugin
// reopens; fill admits candidates refused with Demoted.
func pass(pool []*candidate, want int, sels []framework.SelectPlugin, fill bool, chosen []*candidate) []*candidate {
	var pending []*candidate
	admit := func(cd *candidate) bool {
		cd.refusal, cd.refusedBy = nil, ""
		for _, s := range sels {
			st := s.Admit(cd.cluster)
			switch st.CodeOf() {
			case framework.Success, framework.Warning:
				continue
			case framework.Demoted:
				if fill {
					if cd.refusal == nil {
						cd.refusal, cd.refusedBy = st, s.Name()
					}
					continue
				}
			}
			cd.refusal, cd.refusedBy = st, s.Name()
			return false
		}
		return true
	}
	take := func(cd *candidate) (reopen bool) {
		cd.chosen, cd.filled = true, fill && cd.refusal != nil
		chosen = append(chosen, cd)
		for _, s := range sels {
			if s.Chose(cd.cluster) {
				reopen = true
			}
		}
		return reopen
	}
	reopen := false
	for i := 0; len(chosen) < want; {
		if reopen {
			reopen = false
			for j := 0; j < len(pending) && len(chosen) < want; {
				if cd := pending[j]; admit(cd) {
					pending = append(pending[:j], pending[j+1:]...)
					if take(cd) {
						j = 0
					}
					continue
				}
				j++
			}
			continue
		}
		if i >= len(pool) {
			break
		}
		cd := pool[i]
		i++
		if admit(cd) {
			reopen = take(cd)
		} else {
			pending = append(pending, cd)
		}
	}
	return chosen
}
