import { Controller, Get, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Auth, CurrentPrincipal } from '#src/access/auth/auth.decorator.js';
import type { Principal } from '#src/access/tenants/tenants.service.js';
import { ApiStandardProblems } from '#src/platform/errors/api-problem-responses.js';
import {
  ApiCardProblems,
  CardQuery,
  type CardQueryOf,
  facade,
  CardRoute,
} from '../common/card-api.js';
import { CardBranchesService } from './card-branches.service.js';

@ApiTags('Card branches')
@ApiStandardProblems()
@ApiCardProblems()
@Auth('app')
@Controller('v1/card/branches')
export class CardBranchesController {
  constructor(private readonly branches: CardBranchesService) {}

  @Get()
  @CardRoute({
    summary: 'List branches',
    description:
      "The merchant's branches (set up at the provider); give one's token as `branchToken` on a payment.",
    query: 'listBranches',
    answer: [200, 'BranchList', 'A page of branches'],
  })
  async listCardBranches(
    @CurrentPrincipal() principal: Principal,
    @Query(CardQuery('listBranches')) query: CardQueryOf<'listBranches'>,
  ) {
    return facade('BranchList', await this.branches.list(principal.tenantId, query));
  }
}
