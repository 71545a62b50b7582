/** Other parties that appear in the generated account history, per account currency. */
export interface Counterparty {
  name: string;
  iban: string;
  /** What the party sends or charges, for the remittance text. */
  remittances: readonly string[];
}

export interface CounterpartySet {
  merchants: readonly Counterparty[];
  employer: Counterparty;
}

const HUF: CounterpartySet = {
  merchants: [
    {
      name: 'Villamos Energia Zrt',
      iban: 'HU38116000066000000001234561',
      remittances: ['Electricity bill', 'Aramszamla'],
    },
    {
      name: 'Tisza Telekom Nyrt',
      iban: 'HU82104001022000000009876547',
      remittances: ['Mobile subscription', 'Internet monthly fee'],
    },
    {
      name: 'Kiskosar Aruhaz Kft',
      iban: 'HU69120011011000000011112223',
      remittances: ['Card purchase', 'Groceries'],
    },
  ],
  employer: {
    name: 'Danube Logistics Kft',
    iban: 'HU47137000093000000005556664',
    remittances: ['Salary'],
  },
};

const PLN: CounterpartySet = {
  merchants: [
    {
      name: 'Energia Polnocna S.A.',
      iban: 'PL40109010144000000012345678',
      remittances: ['Electricity invoice', 'Rachunek za prad'],
    },
    {
      name: 'Wisla Mobile Sp. z o.o.',
      iban: 'PL20114020044000000098765432',
      remittances: ['Mobile subscription', 'Abonament'],
    },
    {
      name: 'Sklep Pod Lipami',
      iban: 'PL20102010000000000055554444',
      remittances: ['Card purchase', 'Zakupy'],
    },
  ],
  employer: {
    name: 'Baltic Software Sp. z o.o.',
    iban: 'PL04105000150000000077778888',
    remittances: ['Wynagrodzenie', 'Salary'],
  },
};

const EUR: CounterpartySet = {
  merchants: [
    {
      name: 'Hellenic Power S.A.',
      iban: 'GR9401101250000012300695015',
      remittances: ['Electricity bill', 'Power invoice'],
    },
    {
      name: 'Aegean Telecom',
      iban: 'GR4501720000000000445566778',
      remittances: ['Mobile subscription', 'Fibre monthly fee'],
    },
    {
      name: 'Agora Supermarkets',
      iban: 'GR5502602000000000112233445',
      remittances: ['Card purchase', 'Groceries'],
    },
  ],
  employer: {
    name: 'Piraeus Shipping Services',
    iban: 'GR1201401110000000999888777',
    remittances: ['Salary'],
  },
};

export const COUNTERPARTIES: Readonly<Record<'EUR' | 'HUF' | 'PLN', CounterpartySet>> = {
  EUR,
  HUF,
  PLN,
};

/** Every counterparty IBAN, so a test can prove their check digits. */
export const COUNTERPARTY_IBANS: readonly string[] = [EUR, HUF, PLN].flatMap((set) =>
  [...set.merchants, set.employer].map((party) => party.iban),
);
