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
	Version   string            `json:"version"`
	TestStart IperfTestStart    `json:"test_start"`
	Timestamp struct {
		TimeSecs int64 `json:"timesecs"`
	} `json:"timestamp"`
}

// IperfConnection is one data connection.
type IperfConnection struct {
	Socket     int    `json:"socket"`
	LocalHost  string `json:"local_host"`
	LocalPort  int    `json:"local_port"`
	RemoteHost string `json:"remote_host"`
	RemotePort int    `json:"remote_port"`
}

// IperfTestStart is the test parameters as iperf3 understood them.
type IperfTestStart struct {
	Protocol      string  `json:"protocol"`
	NumStreams    int     `json:"num_streams"`
	BlkSize       int     `json:"blksize"`
	Duration      float64 `json:"duration"`
	Reverse       int     `json:"reverse"`
	TOS           int     `json:"tos"`
	TargetBitrate uint64  `json:"target_bitrate"`
}

// IperfInterval is one reporting interval.
type IperfInterval struct {
	Sum IperfSum `json:"sum"`
}

// IperfSum is a sum block (interval, sum, sum_sent, sum_received).
type IperfSum struct {
	Start         float64 `json:"start"`
	End           float64 `json:"end"`
	Seconds       float64 `json:"seconds"`
	Bytes         uint64  `json:"bytes"`
	BitsPerSecond float64 `json:"bits_per_second"`
	Retransmits   uint64  `json:"retransmits"`
	JitterMs      float64 `json:"jitter_ms"`
	LostPackets   uint64  `json:"lost_packets"`
	Packets       uint64  `json:"packets"`
	LostPercent   float64 `json:"lost_percent"`
	Sender        bool    `json:"sender"`
}

// IperfEnd is the "end" object.
type IperfEnd struct {
	Sum         *IperfSum `json:"sum,omitempty"` // UDP
	SumSent     IperfSum  `json:"sum_sent"`
	SumReceived IperfSum  `json:"sum_received"`
}
