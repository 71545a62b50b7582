import { units, formatAmount, type Milli } from './money.js';

/**
 * The sandbox's PSUs and their accounts. Everything here is fixed so that documentation and
 * tests can name IBANs and amounts; the account history is generated from it deterministically.
 */

export type AccountStatus = 'enabled' | 'blocked';
export type CashAccountType = 'CACC' | 'SVGS';

export interface SandboxAccountSeed {
  brandId: string;
  iban: string;
  currency: 'EUR' | 'HUF' | 'PLN';
  status: AccountStatus;
  cashAccountType: CashAccountType;
  product: string;
  name: string;
  ownerName: string;
  details: string;
  /** interimAvailable when the sandbox starts (pending debits already deducted). */
  available: Milli;
  goodFor: string;
}

export interface SandboxUser {
  username: string;
  password: string;
  displayName: string;
  accounts: readonly SandboxAccountSeed[];
}

const alice: SandboxUser = {
  username: 'alice',
  password: 'alice-pass',
  displayName: 'Alice Nagy',
  accounts: [
    {
      brandId: 'danube-bank',
      iban: 'HU75118000170000001234567817',
      currency: 'HUF',
      status: 'enabled',
      cashAccountType: 'CACC',
      product: 'Lakossagi folyoszamla',
      name: 'Main account',
      ownerName: 'Nagy Alice',
      details: 'Current account with debit card',
      available: units(1_520_340, 50),
      goodFor: 'domestic HUF payments with enough funds; AIS happy path',
    },
    {
      brandId: 'danube-bank',
      iban: 'HU80118000170000001234567824',
      currency: 'EUR',
      status: 'enabled',
      cashAccountType: 'CACC',
      product: 'Deviza szamla',
      name: 'Euro account',
      ownerName: 'Nagy Alice',
      details: 'Foreign-currency current account',
      available: units(2_450, 75),
      goodFor: 'SEPA and cross-border EUR payments; confirmation of funds in EUR',
    },
    {
      brandId: 'danube-bank',
      iban: 'HU39118000170000007654321017',
      currency: 'HUF',
      status: 'blocked',
      cashAccountType: 'SVGS',
      product: 'Megtakaritasi szamla',
      name: 'Savings',
      ownerName: 'Nagy Alice',
      details: 'Savings account, blocked by the bank',
      available: units(300_000),
      goodFor: 'a blocked account: readable, but payments from it are rejected (RJCT)',
    },
    {
      brandId: 'aegean-bank',
      iban: 'GR6509001020000000987600111',
      currency: 'EUR',
      status: 'enabled',
      cashAccountType: 'CACC',
      product: 'Trexon logariasmos',
      name: 'Everyday account',
      ownerName: 'Alice Nagy',
      details: 'Current account',
      available: units(730, 20),
      goodFor: 'a second brand for the same user',
    },
  ],
};

const bob: SandboxUser = {
  username: 'bob',
  password: 'bob-pass',
  displayName: 'Robert Kowalski',
  accounts: [
    {
      brandId: 'vistula-bank',
      iban: 'PL33193000180000100200300401',
      currency: 'PLN',
      status: 'enabled',
      cashAccountType: 'CACC',
      product: 'Konto osobiste',
      name: 'Personal account',
      ownerName: 'Robert Kowalski',
      details: 'Personal current account with card',
      available: units(8_420, 55),
      goodFor: 'domestic PLN payments with enough funds',
    },
    {
      brandId: 'vistula-bank',
      iban: 'PL06193000180000100200300402',
      currency: 'PLN',
      status: 'enabled',
      cashAccountType: 'SVGS',
      product: 'Konto oszczednosciowe',
      name: 'Savings',
      ownerName: 'Robert Kowalski',
      details: 'Savings account',
      available: units(25_000),
      goodFor: 'a second PLN account for bank-offered consents',
    },
    {
      brandId: 'vistula-bank',
      iban: 'PL76193000180000100200300403',
      currency: 'EUR',
      status: 'enabled',
      cashAccountType: 'CACC',
      product: 'Rachunek walutowy',
      name: 'Euro account',
      ownerName: 'Robert Kowalski',
      details: 'Foreign-currency account with a low balance',
      available: units(12, 40),
      goodFor:
        'insufficient funds: EUR payments above 12.40 are rejected, funds checks answer false',
    },
    {
      brandId: 'danube-bank',
      iban: 'HU53118000240000002345678917',
      currency: 'HUF',
      status: 'enabled',
      cashAccountType: 'CACC',
      product: 'Lakossagi folyoszamla',
      name: 'Hungarian account',
      ownerName: 'Kowalski Robert',
      details: 'Current account',
      available: units(48_000),
      goodFor: 'insufficient funds in HUF: payments above 48000 HUF are rejected',
    },
  ],
};

const carol: SandboxUser = {
  username: 'carol',
  password: 'carol-pass',
  displayName: 'Carol Papadopoulou',
  accounts: [
    {
      brandId: 'aegean-bank',
      iban: 'GR1309001010000000123400561',
      currency: 'EUR',
      status: 'enabled',
      cashAccountType: 'CACC',
      product: 'Trexon logariasmos',
      name: 'Main account',
      ownerName: 'Carol Papadopoulou',
      details: 'Current account with debit card',
      available: units(5_877, 78),
      goodFor: 'SEPA payments and AIS in EUR',
    },
    {
      brandId: 'aegean-bank',
      iban: 'GR8309001010000000123400562',
      currency: 'EUR',
      status: 'blocked',
      cashAccountType: 'SVGS',
      product: 'Logariasmos tamieftirio',
      name: 'Savings',
      ownerName: 'Carol Papadopoulou',
      details: 'Savings account, blocked by the bank',
      available: units(10_000),
      goodFor: 'a blocked EUR account: payments from it are rejected (RJCT)',
    },
    {
      brandId: 'vistula-bank',
      iban: 'PL26193000210000500600700801',
      currency: 'PLN',
      status: 'enabled',
      cashAccountType: 'CACC',
      product: 'Konto osobiste',
      name: 'Polish account',
      ownerName: 'Carol Papadopoulou',
      details: 'Personal current account',
      available: units(3_150),
      goodFor: 'a second user at vistula-bank',
    },
  ],
};

export const SANDBOX_USERS: readonly SandboxUser[] = [alice, bob, carol];

export function findUser(username: string): SandboxUser | undefined {
  return SANDBOX_USERS.find((user) => user.username === username);
}

export function accountsAtBrand(user: SandboxUser, brandId: string): readonly SandboxAccountSeed[] {
  return user.accounts.filter((account) => account.brandId === brandId);
}

/** Documentation of the test PSUs (for docs/sandbox.md): credentials, brands and what each account is good for. */
export interface TestUserDescription {
  username: string;
  password: string;
  name: string;
  brands: string[];
  accounts: {
    brandId: string;
    iban: string;
    currency: string;
    status: AccountStatus;
    cashAccountType: CashAccountType;
    /** interimAvailable at sandbox start, before any sandbox payment. */
    availableBalance: string;
    goodFor: string;
  }[];
}

export const TEST_USERS: readonly TestUserDescription[] = SANDBOX_USERS.map((user) => ({
  username: user.username,
  password: user.password,
  name: user.displayName,
  brands: [...new Set(user.accounts.map((account) => account.brandId))],
  accounts: user.accounts.map((account) => ({
    brandId: account.brandId,
    iban: account.iban,
    currency: account.currency,
    status: account.status,
    cashAccountType: account.cashAccountType,
    availableBalance: formatAmount(account.available),
    goodFor: account.goodFor,
  })),
}));
