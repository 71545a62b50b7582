/** The banks (brands) the sandbox provider reaches. Invented names: no real bank's data is imitated. */
export interface Brand {
  brandId: string;
  brandName: string;
  /** Country of the bank, which decides the IBANs of its accounts. */
  country: 'HU' | 'PL' | 'GR';
  /**
   * Canonical payment products (keys of the contract's product rules) the bank does not offer:
   * 403 PRODUCT_INVALID. Every other product of the rules is offered.
   */
  productsNotOffered: readonly string[];
}

export const BRANDS: readonly Brand[] = [
  {
    brandId: 'danube-bank',
    brandName: 'Danube Bank Hungary Zrt. (sandbox)',
    country: 'HU',
    productsNotOffered: [],
  },
  {
    brandId: 'vistula-bank',
    brandName: 'Vistula Bank Polska S.A. (sandbox)',
    country: 'PL',
    productsNotOffered: [],
  },
  // Domestic transfers take only HUF or PLN, and a Greek bank holds neither.
  {
    brandId: 'aegean-bank',
    brandName: 'Aegean Bank S.A. (sandbox)',
    country: 'GR',
    productsNotOffered: ['domestic-credit-transfers'],
  },
];

export function findBrand(brandId: string): Brand | undefined {
  return BRANDS.find((brand) => brand.brandId === brandId);
}

export function trimTrailingSlash(url: string): string {
  return url.replace(/\/+$/, '');
}

/** Where the PSU authorises consents and payments of the brand; every scaRedirect lies below it. */
export function authorizationEndpoint(scaBaseUrl: string, brandId: string): string {
  return `${trimTrailingSlash(scaBaseUrl)}/sca/${encodeURIComponent(brandId)}`;
}
