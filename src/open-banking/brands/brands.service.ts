import { Injectable } from '@nestjs/common';
import { OpenBankingClient } from '#src/upstreams/open-banking/open-banking.client.js';
import { requestIdHeader } from '#src/upstreams/http/upstream-transport.js';

export interface Brand {
  brandId: string;
  brandName: string;
}

const FRESH_MS = 5 * 60 * 1000;

/**
 * The banks, cached from the provider and refreshed after five minutes. The cache is per replica on purpose:
 * it holds no state that must be shared, only a copy of a slow-changing upstream list.
 */
@Injectable()
export class BrandsService {
  private cache?: { at: number; brands: Brand[] };

  constructor(private readonly bank: OpenBankingClient) {}

  async list(forceRefresh = false): Promise<{ brands: Brand[]; fetchedAt: Date }> {
    if (!forceRefresh && this.cache && Date.now() - this.cache.at < FRESH_MS)
      return { brands: this.cache.brands, fetchedAt: new Date(this.cache.at) };
    const answer = await this.bank.call('listBrands', '*', (api) =>
      api.GET('/brands', {
        params: { header: { ...requestIdHeader() } },
      }),
    );
    if (answer.status >= 400 || !answer.data) throw this.bank.refusal('listBrands', answer);
    // authorizationEndpoint is the bank's SCA address: apps use the scaRedirect of each consent instead.
    const brands = answer.data.brands.map((brand) => ({
      brandId: brand.brandId,
      brandName: brand.brandName,
    }));
    this.cache = { at: Date.now(), brands };
    return { brands, fetchedAt: new Date(this.cache.at) };
  }
}
