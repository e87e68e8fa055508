package traffic

// Typed view of `iperf3 -J` output (iperf 3.12), only the fields used.

// IperfReport is one side's decoded iperf3 JSON document.
type IperfReport struct {
	Start     IperfStart      `json:"start"`
	Intervals []IperfInterval `json:"intervals"`
	End       IperfEnd        `json:"end"`
	Error     string          `json:"error,omitempty"`
}

// IperfStart is the "start" object.
type IperfStart struct {
	Connected []IperfConnection `json:"connected"`
	TestStart IperfTestStart    `json:"test_start"`
}

// IperfConnection is one data connection.
type IperfConnection struct {
	Socket int `json:"socket"`
}

// IperfTestStart is the test parameters as iperf3 understood them.
type IperfTestStart struct {
	Protocol string `json:"protocol"`
}

// IperfInterval is one reporting interval.
type IperfInterval struct {
	Sum IperfSum `json:"sum"`
}

// IperfSum is a sum block (interval, sum_sent, sum_received).
type IperfSum struct {
	Bytes         uint64  `json:"bytes"`
	BitsPerSecond float64 `json:"bits_per_second"`
	LostPackets   uint64  `json:"lost_packets"`
	Packets       uint64  `json:"packets"`
}

// IperfEnd is the "end" object.
type IperfEnd struct {
	SumSent     IperfSum `json:"sum_sent"`
	SumReceived IperfSum `json:"sum_received"`
}
