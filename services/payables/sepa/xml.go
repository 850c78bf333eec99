package sepa

// The pain.001.001.09 elements written, in schema order (encoding/xml
// writes fields in declaration order, and the schema's sequences are
// strict).

type document struct {
	XMLName struct{}         `xml:"Document"`
	Xmlns   string           `xml:"xmlns,attr"`
	Init    cstmrCdtTrfInitn `xml:"CstmrCdtTrfInitn"`
}

type cstmrCdtTrfInitn struct {
	GrpHdr grpHdr   `xml:"GrpHdr"`
	PmtInf []pmtInf `xml:"PmtInf"`
}

type grpHdr struct {
	MsgID    string   `xml:"MsgId"`
	CreDtTm  string   `xml:"CreDtTm"`
	NbOfTxs  string   `xml:"NbOfTxs"`
	CtrlSum  string   `xml:"CtrlSum"`
	InitgPty initgPty `xml:"InitgPty"`
}

type initgPty struct {
	Nm string `xml:"Nm"`
}

type pmtInf struct {
	PmtInfID    string        `xml:"PmtInfId"`
	PmtMtd      string        `xml:"PmtMtd"`
	BtchBookg   string        `xml:"BtchBookg"`
	NbOfTxs     string        `xml:"NbOfTxs"`
	CtrlSum     string        `xml:"CtrlSum"`
	PmtTpInf    pmtTpInf      `xml:"PmtTpInf"`
	ReqdExctnDt reqdExctnDt   `xml:"ReqdExctnDt"`
	Dbtr        partyXML      `xml:"Dbtr"`
	DbtrAcct    account       `xml:"DbtrAcct"`
	DbtrAgt     agent         `xml:"DbtrAgt"`
	ChrgBr      string        `xml:"ChrgBr"`
	CdtTrfTxInf []cdtTrfTxInf `xml:"CdtTrfTxInf"`
}

type pmtTpInf struct {
	SvcLvl svcLvl `xml:"SvcLvl"`
}

type svcLvl struct {
	Cd string `xml:"Cd"`
}

type reqdExctnDt struct {
	Dt string `xml:"Dt"`
}

type partyXML struct {
	Nm      string         `xml:"Nm"`
	PstlAdr *postalAddress `xml:"PstlAdr,omitempty"`
}

type postalAddress struct {
	StrtNm string `xml:"StrtNm,omitempty"`
	BldgNb string `xml:"BldgNb,omitempty"`
	PstCd  string `xml:"PstCd,omitempty"`
	TwnNm  string `xml:"TwnNm,omitempty"`
	Ctry   string `xml:"Ctry,omitempty"`
}

type account struct {
	ID accountID `xml:"Id"`
}

type accountID struct {
	IBAN string `xml:"IBAN"`
}

type agent struct {
	FinInstnID finInstnID `xml:"FinInstnId"`
}

type finInstnID struct {
	BICFI string `xml:"BICFI,omitempty"`
	Othr  *othr  `xml:"Othr,omitempty"`
}

type othr struct {
	ID string `xml:"Id"`
}

type cdtTrfTxInf struct {
	PmtID    pmtID    `xml:"PmtId"`
	Amt      amt      `xml:"Amt"`
	CdtrAgt  *agent   `xml:"CdtrAgt,omitempty"`
	Cdtr     partyXML `xml:"Cdtr"`
	CdtrAcct account  `xml:"CdtrAcct"`
	RmtInf   *rmtInf  `xml:"RmtInf,omitempty"`
}

type pmtID struct {
	InstrID    string `xml:"InstrId,omitempty"`
	EndToEndID string `xml:"EndToEndId"`
}

type amt struct {
	InstdAmt instdAmt `xml:"InstdAmt"`
}

type instdAmt struct {
	Ccy   string `xml:"Ccy,attr"`
	Value string `xml:",chardata"`
}

type rmtInf struct {
	Ustrd string `xml:"Ustrd"`
}
