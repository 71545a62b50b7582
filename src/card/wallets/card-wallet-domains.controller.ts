import { Body, Controller, Get, HttpCode, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Auth, CurrentPrincipal } from '#src/access/auth/auth.decorator.js';
import type { Principal } from '#src/access/tenants/tenants.service.js';
import { ApiStandardProblems } from '#src/platform/errors/api-problem-responses.js';
import { Idempotent } from '#src/platform/idempotency/idempotent.decorator.js';
import { CardBody, type CardForm } from '../common/card-body.pipe.js';
import { ApiCardProblems, facade, CardRoute } from '../common/card-api.js';
import { CardWalletDomainsService } from './card-wallet-domains.service.js';

const LIST = 'DeviceWalletDomainList';

@ApiTags('Card wallets')
@ApiStandardProblems()
@ApiCardProblems()
@Auth('app', 'admin')
@Controller('v1/card/wallets/domains')
export class CardWalletDomainsController {
  constructor(private readonly domains: CardWalletDomainsService) {}

  @Post()
  @HttpCode(200)
  @Idempotent()
  @CardRoute({
    summary: 'Register device-wallet domains',
    description:
      'The domains (and subdomains) the checkout uses the device wallet on; registering one again changes nothing. Answers every domain now registered. Role app or admin.',
    body: ['DeviceWalletDomainsForm', { domainNames: ['shop.example', 'pay.shop.example'] }],
    answer: [200, LIST, "The tenant's registered domains"],
  })
  async registerWalletDomains(
    @CurrentPrincipal() principal: Principal,
    @Body(CardBody('DeviceWalletDomainsForm')) form: CardForm<'DeviceWalletDomainsForm'>,
  ) {
    return facade(LIST, await this.domains.register(principal.tenantId, form));
  }

  @Get()
  @CardRoute({
    summary: 'List the registered device-wallet domains',
    description: 'Oldest first, as the provider holds them. Role app or admin.',
    answer: [200, LIST, "The tenant's registered domains"],
  })
  async listWalletDomains(@CurrentPrincipal() principal: Principal) {
    return facade(LIST, await this.domains.list(principal.tenantId));
  }

  @Post('deletions')
  @HttpCode(200)
  @Idempotent()
  @CardRoute({
    summary: 'Unregister device-wallet domains',
    description:
      'With the reason (kept in the status history); every name must be registered (else 400, `upstream.code` 80002, and nothing is deleted). Answers the domains still registered. `PUT /devicewallet/domains-deletion` at the provider. Role app or admin.',
    body: [
      'DeviceWalletDomainsDeletionForm',
      {
        domainNames: ['pay.shop.example'],
        reason: 'The payment page moved',
      },
    ],
    answer: [200, LIST, "The tenant's domains still registered"],
  })
  async deleteWalletDomains(
    @CurrentPrincipal() principal: Principal,
    @Body(CardBody('DeviceWalletDomainsDeletionForm'))
    form: CardForm<'DeviceWalletDomainsDeletionForm'>,
  ) {
    return facade(LIST, await this.domains.delete(principal.tenantId, form));
  }
}
