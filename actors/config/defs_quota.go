package config

// Client quota keys (actors/quota reads them at start): the sampled
// rate's window, static as in Kafka.
const (
	KeyQuotaWindowNum  = "quota.window.num"
	KeyQuotaWindowSize = "quota.window.size.seconds"
)

var quotaDefs = []Def{
	{Name: KeyQuotaWindowNum, Type: Int, Default: "11", Check: AtLeast(1),
		Doc: "The number of samples client quota rates are measured over."},
	{Name: KeyQuotaWindowSize, Type: Int, Default: "1", Check: AtLeast(1),
		Doc: "The time span of each sample of client quota rates, in seconds."},
}
