package qos

// Keep is d with only the port groups, address sets and QoS rows whose
// external_ids keep accepts (NetworkQoS statuses and warnings dropped).
func (d Desired) Keep(keep func(externalIDs map[string]string) bool) Desired {
	var out Desired
	for _, r := range d.QoS {
		if keep(r.ExternalIDs) {
			out.QoS = append(out.QoS, r)
		}
	}
	for _, pg := range d.PortGroups {
		if keep(pg.ExternalIDs) {
			out.PortGroups = append(out.PortGroups, pg)
		}
	}
	for _, as := range d.AddressSets {
		if keep(as.ExternalIDs) {
			out.AddressSets = append(out.AddressSets, as)
		}
	}
	return out
}
